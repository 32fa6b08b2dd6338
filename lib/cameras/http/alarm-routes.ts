// The operator's alarm workflow over the API: POST /cameras/<camera>/acknowledge (an optional
// `comment`) acknowledges the standing alarm, POST /cameras/<camera>/reset puts the camera back to
// ok after a repair, GET /cameras/<camera>/history lists its settings changes, acknowledgements
// and resets (alarm-workflow.ts).
import { eventTargets } from '../../webhooks/outbox.js';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { invalidParameter, notFound } from '../../http/errors.js';
import { settingsBody } from '../../http/settings-body.js';
import { acknowledge, reset } from '../alarm-workflow.js';
import type { CameraHttp } from './camera-http.js';
import { cameraDetail } from './camera-detail.js';
import { presentHistoryEntry } from './camera-view.js';
import { checkCameraId } from './fields.js';
import { CAMERAS_PATH } from './picture-links.js';

export const MAX_COMMENT_LENGTH = 1000;

/** The body's optional `comment` (and nothing else). */
function readComment(fields: Record<string, unknown>): string | null {
  const unknown = Object.keys(fields).filter((k) => k !== 'comment');
  if (unknown.length > 0) throw invalidParameter(`unknown field(s) ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(', ')}: this takes an optional "comment"`);
  const raw = fields.comment;
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || raw.length > MAX_COMMENT_LENGTH) throw invalidParameter(`"comment" must be text of at most ${MAX_COMMENT_LENGTH} characters`);
  return raw.trim() || null;
}

export function alarmRoutes(router: Router, deps: CameraHttp): void {
  const stores = () => ({ ...deps, targets: eventTargets(deps.config) });
  const actor = (ctx: Context) => String(ctx.state.user ?? '');

  router.post(`${CAMERAS_PATH}/:camera/acknowledge`, settingsBody(), async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const comment = readComment(ctx.state.fields as Record<string, unknown>);
    await acknowledge(stores(), camera, actor(ctx), comment, Date.now());
    deps.logger.info({ camera, by: actor(ctx) }, 'camera alarm acknowledged');
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });

  router.post(`${CAMERAS_PATH}/:camera/reset`, settingsBody(), async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const comment = readComment(ctx.state.fields as Record<string, unknown>);
    await reset(stores(), camera, actor(ctx), comment, Date.now());
    deps.logger.info({ camera, by: actor(ctx) }, 'camera reset');
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });

  router.get(`${CAMERAS_PATH}/:camera/history`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deps.cameras.get(camera))) throw notFound(`no camera ${camera}`);
    ctx.body = { status: 'success', history: (await deps.cameras.history(camera)).map(presentHistoryEntry) };
  });
}
