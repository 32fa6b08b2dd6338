// /kamcheck: the tamper check. Cheap checks (files present, decodable, at most 25 frames, same
// size as the reference) answer at once with 4xx and create no job. With a `camera`, the service
// keeps the reference: an image sent becomes the camera's reference for its time-of-day slot, and
// a check without one uses the stored reference nearest in time of day (lib/cameras/).
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ReferenceRecord } from '../../cameras/camera-records.js';
import { CheckRefused, setUpCameraCheck, type CameraCheck, type CheckSetupOptions } from '../../cameras/check-setup.js';
import { readCamera, readCapturedAt } from '../../cameras/http/fields.js';
import { discardReference, placeUploadedReference } from '../../cameras/http/reference-upload.js';
import { ApiError, missingFile, notFound, unsupportedMedia } from '../../http/errors.js';
import { probeUpload } from '../../http/probe-upload.js';
import { singleFile, type Upload } from '../../http/upload.js';
import { acceptedTask, acceptJob } from '../../jobs/http/accept-job.js';
import type { JobHttp } from '../../jobs/http/job-http.js';
import { historyPage } from '../../jobs/http/history-page.js';
import { idempotentSubmission } from '../../jobs/http/idempotency.js';
import { presentTask } from '../../jobs/http/task-view.js';
import { readCallbackUrl } from '../../webhooks/http/callback-url.js';
import { seesCamera } from '../../users/roles.js';
import { kamcheckAnalytic } from '../analytic.js';
import { MAX_TAMPER_FRAMES } from '../limits.js';

const KAMCHECK = kamcheckAnalytic.name;

/** The jobs' HTTP face, and the set-up of a camera's check (a check with a `camera`). */
export interface KamcheckHttp extends JobHttp {
  cameraChecks: CheckSetupOptions;
}

export function kamcheckRoutes(router: Router, deps: KamcheckHttp): void {
  router.post(`/${KAMCHECK}`, idempotentSubmission(deps, KAMCHECK, presentTask), deps.upload, async (ctx: Context) => {
    const arrived = Date.now();
    const upload = ctx.state.upload as Upload;
    const video = singleFile(upload, 'video');
    const image = singleFile(upload, 'image');
    const camera = readCamera(upload);
    // A check counts for its camera: a user or key limited to others may not make one. The same
    // answer whether the camera exists or not, which tells nothing of the others.
    if (camera && !seesCamera(ctx.state.principal, camera)) throw new ApiError(403, 'forbidden', `this user or key is limited to other cameras than "${camera}"`);
    const capturedAt = readCapturedAt(upload, arrived);
    const callbackUrl = readCallbackUrl(upload, deps.config);
    if (!video) throw missingFile('video');
    if (!image && !camera) throw missingFile('image');
    const [clip, picture] = await Promise.all([probeUpload(video, 'video'), image ? probeUpload(image, 'image') : null]);
    if (clip.kind !== 'video') throw unsupportedMedia('"video" is a still image; send a video clip');
    if (clip.frames > MAX_TAMPER_FRAMES) {
      throw new ApiError(422, 'too_many_frames', `the clip has ${clip.frames} frames; at most ${MAX_TAMPER_FRAMES} are allowed`);
    }
    if (picture && (clip.width !== picture.width || clip.height !== picture.height)) {
      throw new ApiError(
        422,
        'resolution_mismatch',
        `the video is ${clip.width}x${clip.height} but the reference image is ${picture.width}x${picture.height}`,
      );
    }

    const jobId = randomUUID();
    const { dataDir, slotMinutes } = deps.cameraChecks;
    // With a camera, an image sent becomes its reference for the slot of `captured_at` (recorded
    // with the job, or removed when no job is created).
    const uploaded: ReferenceRecord | null =
      camera && image && picture ? await placeUploadedReference(dataDir, slotMinutes, { camera, file: image, media: picture, capturedAt, sourceJob: jobId }) : null;
    let check: CameraCheck | null = null;
    try {
      if (camera) {
        check = await setUpCameraCheck(deps.cameraChecks, { jobId, camera, capturedAt, clip, uploaded, whenNone: 'refuse', capture: null });
      }
    } catch (err) {
      if (uploaded) await discardReference(dataDir, uploaded);
      if (err instanceof CheckRefused) throw new ApiError(422, err.code, err.message);
      throw err;
    }
    const job = await acceptJob(
      deps,
      kamcheckAnalytic,
      check ? { video } : { video, image: image! },
      (files) => ({
        videoPath: files.video,
        videoName: video.name,
        ...(check ? check.reference : { imagePath: files.image, imageName: image!.name }),
        ...(check && image ? { imageName: image.name } : {}),
        ...(callbackUrl ? { callbackUrl } : {}),
      }),
      {
        id: jobId,
        idempotencyKey: ctx.state.idempotencyKey,
        service: check ? { taskFields: check.taskFields } : {},
        // The camera's uploaded reference and the check's bookkeeping exist exactly when the job does.
        alongside: check?.record,
        discard: uploaded ? () => discardReference(dataDir, uploaded) : undefined,
      },
    );
    await deps.queue.waitForFinish(job.id, deps.config.kamcheckWaitMs);
    ctx.body = { status: 'success', task: presentTask(await acceptedTask(deps, job)) };
  });

  router.get(`/${KAMCHECK}/:jobId`, async (ctx: Context) => {
    const job = await deps.jobs.get(ctx.params.jobId);
    if (!job || job.analytic !== KAMCHECK) throw notFound(`no tamper-check job ${ctx.params.jobId}`);
    ctx.body = { status: 'success', task: presentTask(job) };
  });

  const history = async (ctx: Context) => {
    const { limit, offset } = historyPage(ctx);
    ctx.body = { status: 'success', tasks: (await deps.jobs.recent(KAMCHECK, limit, offset)).map(presentTask) };
  };
  router.get(`/${KAMCHECK}`, history);
  router.get(`/${KAMCHECK}/:page/:per_page`, history);
}
