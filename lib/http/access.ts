// What each role may do, endpoint by endpoint: every route of the app has a rule here, or the
// service does not start (installAccessRules). A request its role does not allow gets 403; a
// camera outside the principal's set gets the 404 of a camera that does not exist.
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { allows, seesCamera, type Principal, type Role } from '../users/roles.js';
import { REALM } from './auth.js';
import { ApiError, notFound, unauthorized } from './errors.js';

/** `open`: no credentials needed (the route checks its own, as the sign-in does). */
export type AccessRule = Role | 'open';

/**
 * `METHOD /path` as the router knows it (HEAD goes with GET). Reads are the viewer's; changes
 * to cameras and jobs the operator's; users, keys and the audit trail the admin's.
 */
export const ACCESS_RULES: Record<string, AccessRule> = {
  'GET /session': 'open',
  'POST /session': 'open',
  'DELETE /session': 'open',
  'GET /healthz': 'viewer',
  'GET /metrics': 'viewer',
  'GET /openapi.json': 'viewer',
  // the analytics: uploads are the operator's, tasks and results everyone's
  'POST /kamcheck': 'operator',
  'GET /kamcheck': 'viewer',
  'GET /kamcheck/:jobId': 'viewer',
  'GET /kamcheck/:page/:per_page': 'viewer',
  'POST /kamcheck_get_reference': 'operator',
  'GET /kamcheck_get_reference': 'viewer',
  'GET /kamcheck_get_reference/:jobId': 'viewer',
  'GET /kamcheck_get_reference/:page/:per_page': 'viewer',
  'POST /face_log': 'operator',
  'GET /face_log': 'viewer',
  'GET /face_log/:jobId': 'viewer',
  'GET /face_log/:page/:per_page': 'viewer',
  'POST /face_detect': 'operator',
  'GET /face_detect': 'viewer',
  'GET /face_detect/:jobId': 'viewer',
  'GET /face_detect/:page/:per_page': 'viewer',
  'POST /face_log_image': 'operator',
  'GET /face_log_image': 'viewer',
  'GET /face_log_image/:jobId': 'viewer',
  'GET /face_log_image/:page/:per_page': 'viewer',
  'POST /face_detect_image': 'operator',
  'GET /face_detect_image': 'viewer',
  'GET /face_detect_image/:jobId': 'viewer',
  'GET /face_detect_image/:page/:per_page': 'viewer',
  'GET /results/:jobId/:token/:file': 'viewer',
  'GET /results/:jobId/:file': 'viewer',
  'GET /cameras': 'viewer',
  'GET /cameras/:camera': 'viewer',
  'GET /cameras/:camera/history': 'viewer',
  'GET /cameras/:camera/state_changes': 'viewer',
  'GET /cameras/:camera/references/:referenceId': 'viewer',
  'GET /cameras/:camera/references/:referenceId/thumbnail': 'viewer',
  'GET /cameras/:camera/captures/:captureId': 'viewer',
  'GET /cameras/:camera/captures/:captureId/thumbnail': 'viewer',
  'PUT /cameras/:camera': 'operator',
  'DELETE /cameras/:camera': 'operator',
  'PUT /cameras/:camera/reference': 'operator',
  'POST /cameras/:camera/reference/from_capture': 'operator',
  'POST /cameras/:camera/check': 'operator',
  'POST /cameras/:camera/acknowledge': 'operator',
  'POST /cameras/:camera/reset': 'operator',
  'GET /users': 'admin',
  'POST /users': 'admin',
  'PUT /users/:name': 'admin',
  'DELETE /users/:name': 'admin',
  'GET /keys': 'admin',
  'POST /keys': 'admin',
  'DELETE /keys/:id': 'admin',
  'GET /audit': 'admin',
};

export const forbidden = (principal: Principal, needed: Role) =>
  new ApiError(403, 'forbidden', `this needs the ${needed} role; ${principal.kind === 'key' ? 'this key' : `user "${principal.id}"`} has the ${principal.role} role`);

/** The rule of `method` on a route's `path`, or undefined when it has none. */
export function accessRule(method: string, path: string): AccessRule | undefined {
  return ACCESS_RULES[`${method === 'HEAD' ? 'GET' : method} ${path}`];
}

/**
 * Puts the rule's check in front of every route; throws, naming them, when routes have no rule.
 * Runs after the route matched, so that a camera's id is known.
 */
export function installAccessRules(router: Router): void {
  const missing: string[] = [];
  for (const layer of router.stack) {
    const path = String(layer.path);
    for (const method of layer.methods.filter((m) => m !== 'HEAD')) if (!accessRule(method, path)) missing.push(`${method} ${path}`);
    layer.stack.unshift(async (ctx: Context, next: Next) => {
      const rule = accessRule(ctx.method, path)!;
      if (rule === 'open') return next();
      const principal = ctx.state.principal as Principal | undefined;
      if (!principal) {
        // A signed link's signature is its whole right (a result file, a picture: reads only).
        if (ctx.state.signedLink && rule === 'viewer') return next();
        throw unauthorized(REALM);
      }
      if (typeof ctx.params?.camera === 'string' && !seesCamera(principal, ctx.params.camera)) throw notFound(`no camera ${ctx.params.camera}`);
      if (!allows(principal.role, rule)) throw forbidden(principal, rule);
      return next();
    });
  }
  if (missing.length > 0) throw new Error(`routes without an access rule (lib/http/access.ts): ${missing.join(', ')}`);
}
