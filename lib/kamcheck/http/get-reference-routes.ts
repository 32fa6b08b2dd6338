// /kamcheck_get_reference: the original service's `KamCheck.get_reference_image(video)`. A clip
// in (at most MAX_REFERENCE_CLIP_FRAMES frames; a still image is refused), a job out whose task
// answers `frame_number` and `reference_image`, a signed link to the clip's quietest frame, which
// a later tamper check takes as its `image`. Polled at /kamcheck_get_reference/<job_id>, listed
// at /kamcheck_get_reference and its pages.
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, missingFile, notFound, unsupportedMedia } from '../../http/errors.js';
import { probeUpload } from '../../http/probe-upload.js';
import { singleFile, type Upload } from '../../http/upload.js';
import { acceptedTask, acceptJob } from '../../jobs/http/accept-job.js';
import { historyPage } from '../../jobs/http/history-page.js';
import { idempotentSubmission } from '../../jobs/http/idempotency.js';
import type { JobHttp } from '../../jobs/http/job-http.js';
import { presentTask, resultLink, type Task } from '../../jobs/http/task-view.js';
import type { JobRecord } from '../../jobs/job-record.js';
import { readCallbackUrl } from '../../webhooks/http/callback-url.js';
import { kamcheckReferenceAnalytic } from '../get-reference/analytic.js';
import { MAX_REFERENCE_CLIP_FRAMES } from '../limits.js';

const NAME = kamcheckReferenceAnalytic.name;

/** The task with its `reference_image` as a signed absolute link under `base`. */
export function presentReferencePickTaskAt(job: JobRecord, deps: Pick<JobHttp, 'links' | 'resultTtlMs'>, base: string): Task {
  const task = presentTask(job);
  if (job.state === 'done' && task.reference_image !== undefined) task.reference_image = resultLink(job, deps, base)(task.reference_image);
  return task;
}

export function kamcheckReferenceRoutes(router: Router, deps: JobHttp): void {
  const present = (job: JobRecord, ctx: Context) => presentReferencePickTaskAt(job, deps, deps.config.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`);

  router.post(`/${NAME}`, idempotentSubmission(deps, NAME, present), deps.upload, async (ctx: Context) => {
    const upload = ctx.state.upload as Upload;
    const video = singleFile(upload, 'video');
    if (!video) throw missingFile('video');
    const callbackUrl = readCallbackUrl(upload, deps.config);
    const clip = await probeUpload(video, 'video');
    if (clip.kind !== 'video') throw unsupportedMedia('"video" is a still image; send a video clip of the camera');
    if (clip.frames > MAX_REFERENCE_CLIP_FRAMES) {
      throw new ApiError(422, 'too_many_frames', `the clip has ${clip.frames} frames; a reference is picked from at most ${MAX_REFERENCE_CLIP_FRAMES}`);
    }
    const job = await acceptJob(
      deps,
      kamcheckReferenceAnalytic,
      { video },
      (files, id) => ({
        jobId: id,
        videoPath: files.video,
        videoName: video.name,
        resultsDir: path.join(deps.resultsDir, id),
        ...(callbackUrl ? { callbackUrl } : {}),
      }),
      { idempotencyKey: ctx.state.idempotencyKey },
    );
    // As the tamper check: a short clip is done within the wait, and the answer is the finished task.
    await deps.queue.waitForFinish(job.id, deps.config.kamcheckWaitMs);
    ctx.body = { status: 'success', task: present(await acceptedTask(deps, job), ctx) };
  });

  router.get(`/${NAME}/:jobId`, async (ctx: Context) => {
    const job = await deps.jobs.get(ctx.params.jobId);
    if (!job || job.analytic !== NAME) throw notFound(`no ${NAME} job ${ctx.params.jobId}`);
    ctx.body = { status: 'success', task: present(job, ctx) };
  });

  const history = async (ctx: Context) => {
    const { limit, offset } = historyPage(ctx);
    ctx.body = { status: 'success', tasks: (await deps.jobs.recent(NAME, limit, offset)).map((job) => present(job, ctx)) };
  };
  router.get(`/${NAME}`, history);
  router.get(`/${NAME}/:page/:per_page`, history);
}
