// /cameras: what the appliance keeps about each camera. GET /cameras lists them, GET
// /cameras/<camera> shows one (state, stream source, references per slot and the last capture as
// signed image links, its last checks), PUT /cameras/<camera> sets its stream source (source-
// routes.ts), PUT /cameras/<camera>/reference sets a reference by hand, DELETE forgets a camera.
import fs from 'node:fs';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { missingFile, notFound } from '../../http/errors.js';
import { probeUpload } from '../../http/probe-upload.js';
import { singleFile, type Upload } from '../../http/upload.js';
import type { SourceRecord } from '../../sources/source-store.js';
import type { CameraRecord, ReferenceRecord } from '../camera-records.js';
import { nearestInTimeOfDay, newestPerSlot } from '../reference-choice.js';
import { referencePath } from '../reference-files.js';
import { minuteOfDay } from '../time-of-day.js';
import type { CameraHttp } from './camera-http.js';
import { presentCamera, presentCameraDetail, presentStateChange, type PictureLinks } from './camera-view.js';
import { checkCameraId, readCapturedAt } from './fields.js';
import { storeUploadedReference } from './reference-upload.js';
import { sourceRoutes } from './source-routes.js';

export const CAMERAS_PATH = '/cameras';
/** How long a picture's link (reference or capture) opens without the Basic header, at least. */
export const REFERENCE_LINK_TTL_MS = 24 * 60 * 60 * 1000;

const LINK_EXPIRY_STEP_S = 3600;

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png' };

/** The path of a reference's picture: `/cameras/<camera>/references/<reference_id>`. */
export function referenceImagePath(camera: string, referenceId: string): string {
  return `${CAMERAS_PATH}/${encodeURIComponent(camera)}/references/${referenceId}`;
}

/** The path of a capture's picture: `/cameras/<camera>/captures/<capture_id>`. */
export function captureImagePath(camera: string, captureId: string): string {
  return `${CAMERAS_PATH}/${encodeURIComponent(camera)}/captures/${captureId}`;
}

/** The token of a picture link signs what the results' links sign a job id with. */
export const referenceLinkSubject = (referenceId: string) => `reference:${referenceId}`;
export const captureLinkSubject = (captureId: string) => `capture:${captureId}`;

/** A capture picture's id: its file's name without the extension. */
export const captureId = (file: string) => file.slice(file.lastIndexOf('/') + 1).replace(/\.[a-z]+$/, '');

export function cameraRoutes(router: Router, deps: CameraHttp): void {
  router.get(CAMERAS_PATH, async (ctx: Context) => {
    const [cameras, sources, references] = await Promise.all([deps.cameras.list(), deps.sources.all(), allCurrentReferences(deps)]);
    const links = pictureLinks(deps, ctx);
    const now = Date.now();
    ctx.body = {
      status: 'success',
      cameras: cameras.map((c) => {
        const source = sources.get(c.id) ?? null;
        return presentCamera(c, { source, currentReference: currentReference(references.get(c.id) ?? [], source, now) }, links);
      }),
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
    await storeUploadedReference(deps.config.dataDir, deps.cameras, deps.config.referenceSlotMinutes, { camera, file: image, media, capturedAt, sourceJob: null });
    deps.logger.info({ camera }, 'camera reference set');
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });

  router.delete(`${CAMERAS_PATH}/:camera`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deps.cameras.delete(camera))) throw notFound(`no camera ${camera}`);
    deps.logger.info({ camera }, 'camera deleted');
    ctx.body = { status: 'success', camera: { camera, deleted: true } };
  });

  router.get(`${CAMERAS_PATH}/:camera/state_changes`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deps.cameras.get(camera))) throw notFound(`no camera ${camera}`);
    ctx.body = { status: 'success', state_changes: (await deps.cameras.stateChanges(camera)).map(presentStateChange) };
  });

  router.get(`${CAMERAS_PATH}/:camera/references/:referenceId`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const ref = /^[0-9a-f-]{36}$/.test(ctx.params.referenceId) ? await deps.cameras.reference(camera, ctx.params.referenceId) : null;
    if (!ref) throw notFound(`camera ${camera} has no reference ${ctx.params.referenceId}`);
    await sendPicture(ctx, referencePath(deps.config.dataDir, ref), `the picture of reference ${ref.id} is gone`);
  });

  router.get(`${CAMERAS_PATH}/:camera/captures/:captureId`, async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const source = await deps.sources.get(camera);
    // Only the last capture's picture is kept: an older link finds it replaced.
    if (!source?.picture || captureId(source.picture.file) !== ctx.params.captureId) throw notFound(`camera ${camera} has no capture ${String(ctx.params.captureId).slice(0, 40)} (only its last capture's picture is kept)`);
    await sendPicture(ctx, `${deps.config.dataDir}/${source.picture.file}`, `the picture of capture ${ctx.params.captureId} is gone`);
  });

  sourceRoutes(router, deps, cameraDetail);
}

async function sendPicture(ctx: Context, file: string, gone: string): Promise<void> {
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat) throw notFound(gone);
  ctx.set('Content-Type', CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream');
  ctx.set('Cache-Control', 'private, max-age=3600');
  ctx.length = stat.size;
  ctx.body = fs.createReadStream(file);
}

/** Signed links to pictures, valid REFERENCE_LINK_TTL_MS, under PUBLIC_BASE_URL or the request's own base. */
function pictureLinks(deps: CameraHttp, ctx: Context): PictureLinks {
  const base = deps.config.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`;
  // Rounded up to the hour: a picture's link stays the same for an hour, so browsers cache it (the console polls).
  const expires = Math.ceil((Date.now() + REFERENCE_LINK_TTL_MS) / 1000 / LINK_EXPIRY_STEP_S) * LINK_EXPIRY_STEP_S;
  const signed = (path: string, subject: string) => `${base}${path}?expires=${expires}&sig=${deps.links.sign(subject, expires)}`;
  return {
    reference: (r) => signed(referenceImagePath(r.camera, r.id), referenceLinkSubject(r.id)),
    capture: (camera, file) => signed(captureImagePath(camera, captureId(file)), captureLinkSubject(captureId(file))),
  };
}

/** Every camera's references, by camera (slot order, newest first in a slot). */
async function allCurrentReferences(deps: CameraHttp): Promise<Map<string, ReferenceRecord[]>> {
  const byCamera = new Map<string, ReferenceRecord[]>();
  for (const r of await deps.cameras.references(null)) byCamera.set(r.camera, [...(byCamera.get(r.camera) ?? []), r]);
  return byCamera;
}

/** The reference a check now would use: of the newest per slot (of the last capture's size when known), the nearest in time of day. */
function currentReference(refs: ReferenceRecord[], source: SourceRecord | null, now: number): ReferenceRecord | null {
  const newest = newestPerSlot(refs);
  const size = source?.picture;
  const sized = size ? newest.filter((r) => r.width === size.width && r.height === size.height) : [];
  return nearestInTimeOfDay(sized.length > 0 ? sized : newest, minuteOfDay(now));
}

export type CameraDetail = (deps: CameraHttp, ctx: Context, camera: string) => Promise<Record<string, unknown>>;

const cameraDetail: CameraDetail = async (deps, ctx, camera) => {
  const record: CameraRecord | null = await deps.cameras.get(camera);
  if (!record) throw notFound(`no camera ${camera}`);
  const [references, checks, source] = await Promise.all([deps.cameras.references(camera), deps.cameras.checks(camera), deps.sources.get(camera)]);
  const view = { source, currentReference: currentReference(references, source, Date.now()) };
  return presentCameraDetail(record, view, references, checks, deps.config.referenceSlotMinutes, pictureLinks(deps, ctx));
};
