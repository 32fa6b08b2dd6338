// /kamcheck: the tamper check. Cheap checks (files present, decodable, at most 25 frames, same
// size as the reference) answer at once with 4xx and create no job. With a `camera`, the service
// keeps the reference: an image sent becomes the camera's reference for its time-of-day slot, and
// a check without one uses the stored reference nearest in time of day (lib/cameras/).
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, missingFile, notFound, unsupportedMedia } from '../http/errors.js';
import { randomUUID } from 'node:crypto';
import { singleFile, type Upload, type UploadedFile } from '../http/upload.js';
import { httpDate, presentTask } from '../http/task-view.js';
import { readCamera, readCapturedAt } from '../cameras/fields.js';
import { readCallbackUrl } from '../webhooks/callback-url.js';
import { chooseReference, insertPendingCheck, insertReference, type PendingCheck, type ReferenceRecord } from '../cameras/camera-store.js';
import { discardReference, placeUploadedReference, referencePath } from '../cameras/reference-upload.js';
import { idempotentSubmission } from '../http/idempotency.js';
import { newReferenceFile } from '../cameras/reference-files.js';
import { minuteOfDay, slotOf } from '../cameras/time-of-day.js';
import { presentReference } from '../cameras/present.js';
import type { MediaInfo } from '../video/probe.js';
import { probeUpload } from '../http/probe-upload.js';
import type { ServiceDeps } from '../http/app.js';
import { acceptedTask, acceptJob } from '../http/routes/accept-job.js';
import { historyPage } from '../http/history-page.js';
import { MAX_TAMPER_FRAMES } from './limits.js';
import { kamcheckAnalytic } from './analytic.js';

const KAMCHECK = kamcheckAnalytic.name;

export function kamcheckRoutes(router: Router, deps: ServiceDeps): void {
  router.post(`/${KAMCHECK}`, idempotentSubmission(deps, KAMCHECK, presentTask), deps.upload, async (ctx: Context) => {
    const arrived = Date.now();
    const upload = ctx.state.upload as Upload;
    const video = singleFile(upload, 'video');
    const image = singleFile(upload, 'image');
    const camera = readCamera(upload);
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
    const stored = camera ? await cameraReference(deps, camera, capturedAt, clip, image && picture ? { file: image, media: picture } : null, jobId) : null;
    const check = stored ? cameraCheck(deps, jobId, camera!, capturedAt, stored, clip) : null;
    const job = await acceptJob(
      deps,
      kamcheckAnalytic,
      stored ? { video } : { video, image: image! },
      (files) => ({
        videoPath: files.video,
        imagePath: stored ? stored.path : files.image,
        videoName: video.name,
        imageName: image ? image.name : `reference ${stored!.reference.id}`,
        ...(check?.refreshPath ? { refreshPath: check.refreshPath } : {}),
        ...(callbackUrl ? { callbackUrl } : {}),
      }),
      {
        id: jobId,
        idempotencyKey: ctx.state.idempotencyKey,
        service: check ? { taskFields: check.taskFields } : {},
        // The camera's uploaded reference and the check's bookkeeping exist exactly when the job does.
        alongside: check
          ? async (tx) => {
              if (stored!.uploaded) await insertReference(tx, stored!.reference);
              await insertPendingCheck(tx, check.pending);
            }
          : undefined,
        discard: stored?.uploaded ? () => discardReference(deps.config.dataDir, stored.reference) : undefined,
      },
    );
    await deps.queue.waitForFinish(job.id, deps.config.kamcheckWaitMs);
    ctx.body = { status: 'success', task: presentTask(await acceptedTask(deps, job)) };
  });

  router.get(`/${KAMCHECK}/:jobId`, async (ctx: Context) => {
    const job = await deps.store.get(ctx.params.jobId);
    if (!job || job.analytic !== KAMCHECK) throw notFound(`no tamper-check job ${ctx.params.jobId}`);
    ctx.body = { status: 'success', task: presentTask(job) };
  });

  const history = async (ctx: Context) => {
    const { limit, offset } = historyPage(ctx);
    ctx.body = { status: 'success', tasks: (await deps.store.recent(KAMCHECK, limit, offset)).map(presentTask) };
  };
  router.get(`/${KAMCHECK}`, history);
  router.get(`/${KAMCHECK}/:page/:per_page`, history);
}

interface StoredReference {
  reference: ReferenceRecord;
  /** Absolute path the worker reads. */
  path: string;
  /** The check's image became the reference (no refresh from its clip then). */
  uploaded: boolean;
}

/**
 * A camera check's reference: the image sent with it, which becomes the camera's reference for
 * the slot of `captured_at`, or else the stored one nearest in time of day.
 */
async function cameraReference(
  deps: ServiceDeps,
  camera: string,
  capturedAt: number,
  clip: MediaInfo,
  image: { file: UploadedFile; media: MediaInfo } | null,
  jobId: string,
): Promise<StoredReference> {
  const { dataDir, referenceSlotMinutes } = deps.config;
  if (image) {
    // Recorded with the job (acceptJob's `alongside`), or removed when no job is created.
    const reference = await placeUploadedReference(dataDir, referenceSlotMinutes, { camera, ...image, capturedAt, sourceJob: jobId });
    return { reference, path: referencePath(dataDir, reference), uploaded: true };
  }
  const choice = await chooseReference(deps.store.db, camera, minuteOfDay(capturedAt), clip.width, clip.height);
  if ('none' in choice) {
    throw new ApiError(422, 'no_reference', `camera "${camera}" has no reference yet: send an "image" with this check, or PUT /cameras/${camera}/reference`);
  }
  if ('otherSizes' in choice) {
    const sizes = choice.otherSizes.map((s) => `${s.width}x${s.height}`).join(', ');
    throw new ApiError(422, 'resolution_mismatch', `the video is ${clip.width}x${clip.height} but camera "${camera}" has references of ${sizes} only`);
  }
  return { reference: choice.found, path: referencePath(dataDir, choice.found), uploaded: false };
}

/**
 * A camera check's bookkeeping (lib/cameras/check-outcome.ts reads it when the job finishes), the
 * task's camera fields, and where the worker writes the clip's quietest frame: a check against a
 * stored reference that returns 0 renews the reference of its own slot from its clip.
 */
function cameraCheck(deps: ServiceDeps, jobId: string, camera: string, capturedAt: number, stored: StoredReference, clip: MediaInfo): { pending: PendingCheck; refreshPath?: string; taskFields: Record<string, unknown> } {
  const { dataDir, referenceSlotMinutes } = deps.config;
  let refresh: PendingCheck['refresh'] = null;
  let refreshPath: string | undefined;
  if (!stored.uploaded) {
    const target = newReferenceFile(dataDir, 'jpg');
    refresh = { id: target.id, file: target.file, slot: slotOf(capturedAt, referenceSlotMinutes), minuteOfDay: minuteOfDay(capturedAt) };
    refreshPath = target.absolute;
  }
  return {
    pending: { jobId, camera, capturedAt, width: clip.width, height: clip.height, refresh },
    refreshPath,
    taskFields: { camera, captured_at: httpDate(capturedAt), reference: presentReference(stored.reference, referenceSlotMinutes) },
  };
}
