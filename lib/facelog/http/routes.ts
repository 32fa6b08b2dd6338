// The face analytics' routes: POST /<analytic> uploads a file and parameters, GET
// /<analytic>/<job_id> polls the job. /face_log takes a video or a still image; the original
// service's /face_log_image and /face_detect_image take an image, /face_detect a video. Cheap
// checks (file present and decodable, of the kind the path takes, parameters) answer at once with
// 4xx and create no job. Result file names are turned into signed absolute links when shown.
//
// Histories: the face log's lives at /face_detect as the seed says (also paged under /face_log)
// and lists face logs of images too; /face_log_image lists those alone. Face detections, of a
// video or an image, are listed together at /face_detect_image, since /face_detect is taken.
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { invalidParameter, missingFile, notFound, unsupportedMedia } from '../../http/errors.js';
import { probeUpload } from '../../http/probe-upload.js';
import { singleFile, type Upload } from '../../http/upload.js';
import type { Analytic } from '../../jobs/analytic.js';
import { acceptedTask, acceptJob } from '../../jobs/http/accept-job.js';
import { historyPage } from '../../jobs/http/history-page.js';
import type { JobHttp } from '../../jobs/http/job-http.js';
import { idempotentSubmission } from '../../jobs/http/idempotency.js';
import { readCallbackUrl } from '../../webhooks/http/callback-url.js';
import { faceDetectAnalytic, faceDetectImageAnalytic, faceLogAnalytic, faceLogImageAnalytic, type FaceLogInput } from '../analytic.js';
import { parseFaceLogParams } from './form-params.js';
import { presentFaceLogTask } from './task-view.js';

interface FaceRoutes {
  analytic: Analytic<FaceLogInput>;
  /** What the upload may be: a video, a still image, or either (processed as a one-frame video). */
  takes: 'video' | 'image' | 'either';
  /** The file field clients send (either name is taken; this one is named when both are missing). */
  field: 'video' | 'image';
  /** Writes the drawn frame as `results_image` (the jobs of an image). */
  resultsImage: boolean;
  /** Writes the overlay video as `results_video`. */
  overlayVideo: boolean;
  /** History paths (each also paged as <path>/<page>/<per_page>) and the analytics they list. */
  history: { paths: string[]; lists: string[] }[];
}

export const faceLogRoutes = faceRoutes({
  analytic: faceLogAnalytic,
  takes: 'either',
  field: 'video',
  resultsImage: false,
  overlayVideo: true,
  history: [{ paths: ['/face_detect', `/${faceLogAnalytic.name}`], lists: [faceLogAnalytic.name, faceLogImageAnalytic.name] }],
});

export const faceLogImageRoutes = faceRoutes({
  analytic: faceLogImageAnalytic,
  takes: 'image',
  field: 'image',
  resultsImage: true,
  overlayVideo: true,
  history: [{ paths: [`/${faceLogImageAnalytic.name}`], lists: [faceLogImageAnalytic.name] }],
});

export const faceDetectRoutes = faceRoutes({
  analytic: faceDetectAnalytic,
  takes: 'video',
  field: 'video',
  resultsImage: false,
  overlayVideo: true,
  // GET /face_detect is the face log's history (the seed); face detections are listed at /face_detect_image.
  history: [],
});

export const faceDetectImageRoutes = faceRoutes({
  analytic: faceDetectImageAnalytic,
  takes: 'image',
  field: 'image',
  resultsImage: true,
  overlayVideo: false,
  history: [{ paths: [`/${faceDetectImageAnalytic.name}`], lists: [faceDetectAnalytic.name, faceDetectImageAnalytic.name] }],
});

function faceRoutes(spec: FaceRoutes): (router: Router, deps: JobHttp) => void {
  const name = spec.analytic.name;
  return (router, deps) => {
    router.post(`/${name}`, idempotentSubmission(deps, name, (job, ctx) => presentFaceLogTask(job, deps, ctx)), deps.upload, async (ctx: Context) => {
      const upload = ctx.state.upload as Upload;
      const video = singleFile(upload, 'video');
      const image = singleFile(upload, 'image');
      if (video && image) throw invalidParameter('send either "video" or "image", not both');
      const file = video ?? image;
      if (!file) throw missingFile(spec.field);
      const params = parseFaceLogParams(upload);
      const callbackUrl = readCallbackUrl(upload, deps.config);
      const media = await probeUpload(file, video ? 'video' : 'image');
      if (spec.takes === 'video' && media.kind === 'image') {
        throw unsupportedMedia(`the upload is a still image; /${name} takes a video (send images to /${faceDetectImageAnalytic.name})`);
      }
      if (spec.takes === 'image' && media.kind === 'video') {
        throw unsupportedMedia(`the upload is a video; /${name} takes a still image (JPEG or PNG)`);
      }

      if (params.startFrame > 0 && params.startFrame >= media.frames) {
        throw invalidParameter(
          `"start_frame" is ${params.startFrame} but the ${media.kind === 'image' ? 'image has 1 frame' : `video has ${media.frames} frames`} (numbered from 0)`,
        );
      }

      const job = await acceptJob(deps, spec.analytic, { video: file }, (files, id) => ({
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
        resultsImage: spec.resultsImage,
        overlayVideo: spec.overlayVideo,
        ...(callbackUrl ? { callbackUrl } : {}),
      }), { idempotencyKey: ctx.state.idempotencyKey });
      ctx.body = { status: 'success', task: presentFaceLogTask(await acceptedTask(deps, job), deps, ctx) };
    });

    router.get(`/${name}/:jobId`, async (ctx: Context) => {
      const job = await deps.jobs.get(ctx.params.jobId);
      if (!job || job.analytic !== name) throw notFound(`no ${name} job ${ctx.params.jobId}`);
      ctx.body = { status: 'success', task: presentFaceLogTask(job, deps, ctx) };
    });

    for (const { paths, lists } of spec.history) {
      const history = async (ctx: Context) => {
        const { limit, offset } = historyPage(ctx);
        const jobs = await deps.jobs.recent(lists, limit, offset);
        ctx.body = { status: 'success', tasks: jobs.map((job) => presentFaceLogTask(job, deps, ctx, { abbreviated: true })) };
      };
      for (const base of paths) {
        router.get(base, history);
        router.get(`${base}/:page/:per_page`, history);
      }
    }
  };
}
