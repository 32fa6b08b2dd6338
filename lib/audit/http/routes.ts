// GET /audit, the admin's page of the trail, and the middleware that records each change a
// request made: what the route noted (ctx.state.audit: its action, target, before and after),
// or, for the other changes of the table below, the route's action and its camera.
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { httpDate } from '../../dates.js';
import { invalidParameter } from '../../http/errors.js';
import type { Principal } from '../../users/roles.js';
import type { AuditStore } from '../audit-store.js';

export const AUDIT_PATH = '/audit';

/** What a route tells the trail of the change it made; recorded once the request succeeded. */
export interface AuditNote {
  action: string;
  target: string;
  before?: unknown;
  after?: unknown;
  detail?: Record<string, unknown>;
}

export function noteChange(ctx: Context, note: AuditNote): void {
  ctx.state.audit = note;
}
const MAX_PER_PAGE = 500;

/**
 * The changes recorded without a note of their route, by `METHOD path` as the router knows it.
 * Jobs' uploads are not in it: they change no setting, and their own records say who sent them.
 */
const ACTIONS: Record<string, string> = {
  'PUT /cameras/:camera': 'camera.changed',
  'DELETE /cameras/:camera': 'camera.deleted',
  'PUT /cameras/:camera/reference': 'camera.reference_set',
  'POST /cameras/:camera/reference/from_capture': 'camera.reference_set',
  'POST /cameras/:camera/acknowledge': 'camera.acknowledged',
  'POST /cameras/:camera/reset': 'camera.reset',
  'POST /cameras/:camera/check': 'camera.check_asked',
};

export function auditTrail(store: AuditStore, address: (ctx: Context) => string, logger: Logger, now: () => number = Date.now) {
  return async (ctx: Context, next: Next) => {
    await next();
    if (ctx.status >= 400) return;
    const noted = ctx.state.audit as AuditNote | undefined;
    const action = noted?.action ?? (ctx._matchedRoute ? ACTIONS[`${ctx.method} ${String(ctx._matchedRoute)}`] : undefined);
    if (!action) return;
    const principal = ctx.state.principal as Principal | undefined;
    const target = noted?.target ?? (typeof ctx.params?.camera === 'string' ? `camera:${ctx.params.camera}` : String(ctx._matchedRoute));
    const detail = noted && (noted.before !== undefined || noted.after !== undefined || noted.detail) ? { ...noted.detail, before: noted.before, after: noted.after } : null;
    await store
      .record({ at: now(), actor: principal?.label ?? String(ctx.state.user ?? ''), address: address(ctx), action, target, detail })
      .catch((err) => logger.error({ err, action, target }, 'cannot record a change in the audit trail'));
  };
}

export function auditRoutes(router: Router, store: AuditStore): void {
  router.get(AUDIT_PATH, async (ctx: Context) => {
    const text = (name: string) => {
      const v = ctx.query[name];
      if (v === undefined) return null;
      if (typeof v !== 'string' || v.length > 200) throw invalidParameter(`"${name}" must be text of at most 200 characters`);
      return v;
    };
    const whole = (name: string, max: number, fallback: number) => {
      const v = ctx.query[name];
      if (v === undefined) return fallback;
      const n = typeof v === 'string' && /^\d{1,7}$/.test(v) ? Number(v) : NaN;
      if (!(n >= 1 && n <= max)) throw invalidParameter(`"${name}" must be a whole number from 1 to ${max}`);
      return n;
    };
    const query = { actor: text('actor'), target: text('target'), page: whole('page', 1_000_000, 1), perPage: whole('per_page', MAX_PER_PAGE, 50) };
    const { events, total } = await store.page(query);
    ctx.body = {
      status: 'success',
      page: query.page,
      per_page: query.perPage,
      total,
      events: events.map((e) => ({ id: e.id, at: httpDate(e.at), actor: e.actor, address: e.address, action: e.action, target: e.target, detail: e.detail })),
    };
  });
}
