// /kamcheck: the tamper check. Cheap checks (files present, decodable, at most 25 frames, same
// size as the reference) answer at once with 4xx and create no job.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, missingFile, notFound, unsupportedMedia } from '../http/errors.js';
import { singleFile, type Upload } from '../http/upload.js';
import { presentTask } from '../http/task-view.js';
import { probeMedia, MediaProbeError, type MediaInfo } from '../video/probe.js';
import type { ServiceDeps } from '../http/app.js';
import { acceptedTask, acceptJob } from '../http/routes/accept-job.js';
import { historyPage } from '../http/history-page.js';
import { MAX_TAMPER_FRAMES } from './limits.js';
import { kamcheckAnalytic } from './analytic.js';

const KAMCHECK = kamcheckAnalytic.name;

export function kamcheckRoutes(router: Router, deps: ServiceDeps): void {
  router.post(`/${KAMCHECK}`, deps.upload, async (ctx: Context) => {
    const upload = ctx.state.upload as Upload;
    const video = singleFile(upload, 'video');
    const image = singleFile(upload, 'image');
    if (!video) throw missingFile('video');
    if (!image) throw missingFile('image');
    const [clip, reference] = await Promise.all([probe(video.path, video.size, 'video'), probe(image.path, image.size, 'image')]);
    if (clip.kind !== 'video') throw unsupportedMedia('"video" is a still image; send a video clip');
    if (clip.frames > MAX_TAMPER_FRAMES) {
      throw new ApiError(422, 'too_many_frames', `the clip has ${clip.frames} frames; at most ${MAX_TAMPER_FRAMES} are allowed`);
    }
    if (clip.width !== reference.width || clip.height !== reference.height) {
      throw new ApiError(
        422,
        'resolution_mismatch',
        `the video is ${clip.width}x${clip.height} but the reference image is ${reference.width}x${reference.height}`,
      );
    }

    const job = await acceptJob(deps, kamcheckAnalytic, { video, image }, (files) => ({
      videoPath: files.video,
      imagePath: files.image,
      videoName: video.name,
      imageName: image.name,
    }));
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

async function probe(file: string, size: number, field: string): Promise<MediaInfo> {
  if (size === 0) throw unsupportedMedia(`"${field}" is an empty file`);
  try {
    return await probeMedia(file);
  } catch (err) {
    if (err instanceof MediaProbeError) throw unsupportedMedia(`"${field}" cannot be decoded: ${err.message}`);
    throw err;
  }
}
