// A camera's stream source and settings over the API: PUT /cameras/<camera> sets them
// (source_url, check_interval_s, enabled; the settings of settings-fields.ts), POST /cameras/<camera>/check checks the stream now, and POST
// /cameras/<camera>/reference/from_capture makes the last capture's picture the reference
// (re-baselining after a deliberate change of the view).
import { eventTargets } from '../../webhooks/outbox.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { noteChange } from '../../audit/http/routes.js';
import { ApiError, notFound } from '../../http/errors.js';
import { settingsBody } from '../../http/settings-body.js';
import { acceptedTask } from '../../jobs/http/accept-job.js';
import { presentTask } from '../../jobs/http/task-view.js';
import { redactSourceUrl } from '../../sources/redact.js';
import { changeSource } from '../source-settings.js';
import { thumbnailFile } from '../../data-files.js';
import { newReferenceFile } from '../reference-files.js';
import { minuteOfDay, slotOf } from '../time-of-day.js';
import type { CameraHttp } from './camera-http.js';
import { checkCameraId } from './fields.js';
import { cameraDetail } from './camera-detail.js';
import { readCameraFields } from './source-fields.js';
import { changeSettings } from '../alarm-workflow.js';

const noSource = (camera: string) => new ApiError(409, 'no_source', `camera "${camera}" has no stream source: set one with PUT /cameras/${camera} {"source_url": ...}`);

export function sourceRoutes(router: Router, deps: CameraHttp): void {
  router.put('/cameras/:camera', settingsBody(), async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    const { source: fields, settings } = readCameraFields(ctx.state.fields as Record<string, unknown>);
    const now = Date.now();
    const stores = { ...deps, targets: eventTargets(deps.config) };
    const url = await changeSource(stores, camera, fields, now);
    const audit: { detail: { source?: unknown }; before?: Record<string, unknown>; after?: Record<string, unknown> } = { detail: {} };
    if (Object.keys(fields).length > 0) {
      audit.detail.source = { source_url: url ? redactSourceUrl(url) : undefined, check_interval_s: fields.intervalS, enabled: fields.enabled };
      deps.logger.info({ camera, source_url: url ? redactSourceUrl(url) : null, check_interval_s: fields.intervalS, enabled: fields.enabled }, 'camera source set');
    }
    if (Object.keys(settings).length > 0) {
      const changed = await changeSettings(stores, camera, settings, ctx.state.user ?? null, now);
      deps.logger.info({ camera, changed: Object.keys(changed) }, 'camera settings set');
      audit.before = Object.fromEntries(Object.entries(changed).map(([k, v]) => [k, v.from]));
      audit.after = Object.fromEntries(Object.entries(changed).map(([k, v]) => [k, v.to]));
    }
    // the audit trail's record: the settings' before and after, the source as set (its password hidden)
    noteChange(ctx, { action: 'camera.changed', target: `camera:${camera}`, ...audit });
    if (url) void deps.checks.look(); // a new source is checked now, not at the next look
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });

  router.post('/cameras/:camera/check', async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deps.cameras.get(camera))) throw notFound(`no camera ${camera}`);
    if (!(await deps.sources.get(camera))) throw noSource(camera);
    const job = await deps.checks.checkNow(camera);
    deps.logger.info({ camera, job_id: job.id }, 'camera check asked for');
    await deps.queue.waitForFinish(job.id, deps.config.kamcheckWaitMs);
    ctx.body = { status: 'success', task: presentTask(await acceptedTask(deps, job)) };
  });

  router.post('/cameras/:camera/reference/from_capture', async (ctx: Context) => {
    const camera = checkCameraId(ctx.params.camera);
    if (!(await deps.cameras.get(camera))) throw notFound(`no camera ${camera}`);
    const source = await deps.sources.get(camera);
    if (!source) throw noSource(camera);
    const picture = source.picture;
    if (!picture) throw new ApiError(409, 'no_capture', `camera "${camera}" has no capture yet: wait for its first check, or POST /cameras/${camera}/check`);
    // A copy: the capture's own file goes when the next capture replaces it.
    const target = newReferenceFile(deps.config.dataDir, 'jpg');
    await fs.copyFile(path.join(deps.config.dataDir, picture.file), target.absolute).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new ApiError(409, 'no_capture', `the picture of camera "${camera}"'s last capture is gone`);
      throw err;
    });
    // the capture's small copy is the reference's too (made on request when the worker wrote none)
    const thumbnail = path.join(deps.config.dataDir, thumbnailFile(target.file));
    await fs.mkdir(path.dirname(thumbnail), { recursive: true });
    await fs.copyFile(path.join(deps.config.dataDir, thumbnailFile(picture.file)), thumbnail).catch(() => {});
    const slotMinutes = deps.config.referenceSlotMinutes;
    try {
      await deps.cameras.addReference({
        id: target.id,
        camera,
        slot: slotOf(picture.at, slotMinutes),
        capturedAt: picture.at,
        minuteOfDay: minuteOfDay(picture.at),
        sourceJob: source.lastCapture?.ok ? source.lastCapture.jobId : null,
        file: target.file,
        width: picture.width,
        height: picture.height,
        createdAt: Date.now(),
        origin: 'capture',
      });
    } catch (err) {
      await fs.rm(target.absolute, { force: true });
      throw err;
    }
    deps.logger.info({ camera, reference_id: target.id }, 'camera reference set from its last capture');
    ctx.body = { status: 'success', camera: await cameraDetail(deps, ctx, camera) };
  });
}
