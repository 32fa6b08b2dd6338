// /face_log: upload a video (or a still image) and parameters; the history lives at /face_detect
// as the seed says. Cheap checks (file present and decodable, parameters) answer at once with
// 4xx and create no job. Result file names are turned into signed absolute links when shown.
import { idempotentSubmission } from '../http/idempotency.js';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { invalidParameter, missingFile, notFound, unsupportedMedia } from '../http/errors.js';
import { singleFile, type Upload } from '../http/upload.js';
import { presentFaceLogTask } from './task-view.js';
import { probeMedia, MediaProbeError } from '../video/probe.js';
import type { ServiceDeps } from '../http/app.js';
import { acceptedTask, acceptJob } from '../http/routes/accept-job.js';
import { historyPage } from '../http/history-page.js';
import { parseFaceLogParams } from './form-params.js';
import { faceLogAnalytic } from './analytic.js';
import { readCallbackUrl } from '../webhooks/callback-url.js';

const FACE_LOG = faceLogAnalytic.name;

export function faceLogRoutes(router: Router, deps: ServiceDeps): void {
  router.post(`/${FACE_LOG}`, idempotentSubmission(deps, FACE_LOG, (job, ctx) => presentFaceLogTask(job, deps, ctx)), deps.upload, async (ctx: Context) => {
    const upload = ctx.state.upload as Upload;
    const video = singleFile(upload, 'video');
    const image = singleFile(upload, 'image');
    if (video && image) throw invalidParameter('send either "video" or "image", not both');
    const file = video ?? image;
    if (!file) throw missingFile('video');
    const params = parseFaceLogParams(upload);
    const callbackUrl = readCallbackUrl(upload, deps.config);
    if (file.size === 0) throw unsupportedMedia('the uploaded file is empty');
    let media;
    try {
      media = await probeMedia(file.path);
    } catch (err) {
      if (err instanceof MediaProbeError) throw unsupportedMedia(`the upload cannot be decoded: ${err.message}`);
      throw err;
    }

    if (params.startFrame > 0 && params.startFrame >= media.frames) {
      throw invalidParameter(
        `"start_frame" is ${params.startFrame} but the ${media.kind === 'image' ? 'image has 1 frame' : `video has ${media.frames} frames`} (numbered from 0)`,
      );
    }

    const job = await acceptJob(deps, faceLogAnalytic, { video: file }, (files, id) => ({
      jobId: id,
      videoPath: files.video,
      videoName: file.name,
      resultsDir: path.join(deps.resultsDir, id),
      width: media.width,
      height: media.height,
      fps: media.fps,
      frames: media.frames,
      still: media.kind === 'image',
      startFrame: params.startFrame,
      maxFrames: params.maxFrames,
      minSize: params.minSize,
      gender: params.gender,
      trackThumbnails: params.trackThumbnails,
      blur: params.blur,
      ...(callbackUrl ? { callbackUrl } : {}),
    }), { idempotencyKey: ctx.state.idempotencyKey });
    ctx.body = { status: 'success', task: presentFaceLogTask(await acceptedTask(deps, job), deps, ctx) };
  });

  router.get(`/${FACE_LOG}/:jobId`, async (ctx: Context) => {
    const job = await deps.store.get(ctx.params.jobId);
    if (!job || job.analytic !== FACE_LOG) throw notFound(`no face-log job ${ctx.params.jobId}`);
    ctx.body = { status: 'success', task: presentFaceLogTask(job, deps, ctx) };
  });

  // The seed serves the history at /face_detect; clients of the original also page it under /face_log.
  const history = async (ctx: Context) => {
    const { limit, offset } = historyPage(ctx);
    const jobs = await deps.store.recent(FACE_LOG, limit, offset);
    ctx.body = { status: 'success', tasks: jobs.map((job) => presentFaceLogTask(job, deps, ctx, { abbreviated: true })) };
  };
  for (const base of ['/face_detect', `/${FACE_LOG}`]) {
    router.get(base, history);
    router.get(`${base}/:page/:per_page`, history);
  }
}
