// /cameras: what the appliance keeps about each camera a VMS checks. GET /cameras lists them
// (each with a signed link to the picture of the reference a check now would use),
// GET /cameras/<camera> shows one (state, references per slot with signed image links, its last
// checks), PUT /cameras/<camera>/reference sets a reference by hand, DELETE forgets a camera.
import fs from 'node:fs';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { missingFile, notFound } from '../http/errors.js';
import { singleFile, type Upload } from '../http/upload.js';
import type { ServiceDeps } from '../http/app.js';
import { probeUpload } from '../http/probe-upload.js';
import {
  cameraChecks,
  cameraReferences,
  currentReference,
  deleteCamera,
  getCamera,
  getReference,
  listCameras,
  referencesByCamera,
  type ReferenceRecord,
} from './camera-store.js';
import { checkCameraId, readCapturedAt } from './fields.js';
import { presentCameraDetail, presentCameraSummary } from './present.js';
import { referencePath, storeUploadedReference } from './reference-upload.js';
import { minuteOfDay } from './time-of-day.js';

export const CAMERAS_PATH = '/cameras';
/** How long a reference's image link opens without the Basic header (at least). */
export const REFERENCE_LINK_TTL_MS = 24 * 60 * 60 * 1000;
/** Link expiries are rounded up to the hour: a picture's link stays the same for an hour, so browsers cache it. */
const LINK_EXPIRY_STEP_S = 3600;

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png' };

/** The path of a reference's picture: `/cameras/<camera>/references/<reference_id>`. */
export function referenceImagePath(camera: string, referenceId: string): string {
  return `${CAMERAS_PATH}/${encodeURIComponent(camera)}/references/${referenceId}`;
}

/** The token of a reference link signs what the results' links sign a job id with. */
export const referenceLinkSubject = (referenceId: string) => `reference:${referenceId}`;

export function cameraRoutes(router: Router, deps: ServiceDeps): void {
  router.get(CAMERAS_PATH, async (ctx: Context) => {
    const [cameras, references] = await Promise.all([listCameras(deps.store.db), referencesByCamera(deps.store.db)]);
    const now = minuteOfDay(Date.now());
    const link = referenceImageLink(deps, ctx);
    ctx.body = {
      status: 'success',
      cameras: cameras.map((c) => ({ ...presentCameraSummary(c), reference_image: link(currentReference(references.get(c.id) ?? [], now)) })),
    };
  });

  router.get(`${CAMERAS_PATH}/:camera`, async (ctx: Context) => {
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, checkCameraId(ctx.params.camera)) };
  });

  router.put(`${CAMERAS_PATH}/:camera/reference`, deps.upload, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const upload = ctx.state.upload as Upload;
    const image = singleFile(upload, 'image');
    if (!image) throw missingFile('image');
    const capturedAt = readCapturedAt(upload, Date.now());
    const media = await probeUpload(image, 'image');
    await storeUploadedReference(deps.config.dataDir, deps.store.db, deps.config.referenceSlotMinutes, { camera, file: image, media, capturedAt, sourceJob: null });
    deps.logger.info({ camera }, 'camera reference set');
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });

  router.delete(`${CAMERAS_PATH}/:camera`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deleteCamera(deps.store.db, camera))) throw notFound(`no camera ${camera}`);
    deps.logger.info({ camera }, 'camera deleted');
    ctx.body = { status: 'success', camera: { camera, deleted: true } };
  });

  router.get(`${CAMERAS_PATH}/:camera/references/:referenceId`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const ref = /^[0-9a-f-]{36}$/.test(ctx.params.referenceId) ? await getReference(deps.store.db, camera, ctx.params.referenceId) : null;
    if (!ref) throw notFound(`camera ${camera} has no reference ${ctx.params.referenceId}`);
    const file = referencePath(deps.config.dataDir, ref);
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat) throw notFound(`the picture of reference ${ref.id} is gone`);
    ctx.set('Content-Type', CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream');
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.length = stat.size;
    ctx.body = fs.createReadStream(file);
  });
}

async function cameraDetail(deps: ServiceDeps, ctx: Context, camera: string): Promise<Record<string, unknown>> {
  const record = await getCamera(deps.store.db, camera);
  if (!record) throw notFound(`no camera ${camera}`);
  const [references, checks] = await Promise.all([cameraReferences(deps.store.db, camera), cameraChecks(deps.store.db, camera)]);
  const link = referenceImageLink(deps, ctx);
  return {
    ...presentCameraDetail(record, references, checks, deps.config.referenceSlotMinutes, (r) => link(r)!),
    reference_image: link(currentReference(references, minuteOfDay(Date.now()))),
  };
}

/**
 * Signed absolute links to reference pictures (null for none), open without the Basic header for
 * at least REFERENCE_LINK_TTL_MS.
 */
function referenceImageLink(deps: ServiceDeps, ctx: Context): (r: ReferenceRecord | null) => string | null {
  const base = deps.config.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`;
  const expires = Math.ceil((Date.now() + REFERENCE_LINK_TTL_MS) / 1000 / LINK_EXPIRY_STEP_S) * LINK_EXPIRY_STEP_S;
  return (r) => r && `${base}${referenceImagePath(r.camera, r.id)}?expires=${expires}&sig=${deps.links.sign(referenceLinkSubject(r.id), expires)}`;
}
