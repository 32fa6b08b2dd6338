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
import { cameraDetail } from './camera-detail.js';
import { listCameras } from './camera-list.js';
import { thumbnailOf } from '../thumbnails.js';
import type { CameraHttp } from './camera-http.js';
import { presentStateChange } from './camera-view.js';
import { checkCameraId, readCapturedAt } from './fields.js';
import { CAMERAS_PATH, captureId } from './picture-links.js';
import { storeUploadedReference } from './reference-upload.js';
import { sourceRoutes } from './source-routes.js';
import { alarmRoutes } from './alarm-routes.js';

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png' };

export function cameraRoutes(router: Router, deps: CameraHttp): void {
  router.get(CAMERAS_PATH, (ctx: Context) => listCameras(deps, ctx));

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

  const referenceFile = async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const ref = /^[0-9a-f-]{36}$/.test(ctx.params.referenceId) ? await deps.cameras.reference(camera, ctx.params.referenceId) : null;
    if (!ref) throw notFound(`camera ${camera} has no reference ${ctx.params.referenceId}`);
    return { file: ref.file, gone: `the picture of reference ${ref.id} is gone` };
  };
  const captureFile = async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const source = await deps.sources.get(camera);
    // Only the last capture's picture is kept: an older link finds it replaced.
    if (!source?.picture || captureId(source.picture.file) !== ctx.params.captureId) throw notFound(`camera ${camera} has no capture ${String(ctx.params.captureId).slice(0, 40)} (only its last capture's picture is kept)`);
    return { file: source.picture.file, gone: `the picture of capture ${ctx.params.captureId} is gone` };
  };
  for (const [path, find] of [
    [`${CAMERAS_PATH}/:camera/references/:referenceId`, referenceFile],
    [`${CAMERAS_PATH}/:camera/captures/:captureId`, captureFile],
  ] as const) {
    router.get(path, async (ctx: Context) => {
      const { file, gone } = await find(ctx);
      await sendPicture(ctx, `${deps.config.dataDir}/${file}`, gone);
    });
    router.get(`${path}/thumbnail`, async (ctx: Context) => {
      const { file, gone } = await find(ctx);
      const thumbnail = await thumbnailOf(deps.config.dataDir, file).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') throw notFound(gone);
        throw err;
      });
      await sendPicture(ctx, thumbnail, gone);
    });
  }

  sourceRoutes(router, deps);
  alarmRoutes(router, deps);
}

async function sendPicture(ctx: Context, file: string, gone: string): Promise<void> {
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat) throw notFound(gone);
  ctx.set('Content-Type', CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream');
  ctx.set('Cache-Control', 'private, max-age=3600');
  ctx.length = stat.size;
  ctx.body = fs.createReadStream(file);
}
