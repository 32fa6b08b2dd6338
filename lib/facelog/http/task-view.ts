// A task of the face analytics (lib/facelog/analytic.ts) as clients see it: the stored result with
// its file names turned into signed absolute links. History entries (/face_detect) abbreviate each
// sighting to its id and frames.
import type { Context } from 'koa';
import type { JobHttp } from '../../jobs/http/job-http.js';
import { presentTask, resultLink, type Task } from '../../jobs/http/task-view.js';
import type { JobRecord } from '../../jobs/job-record.js';

type Sighting = Record<string, unknown> & { thumbnail?: string };

export function presentFaceLogTask(job: JobRecord, deps: Pick<JobHttp, 'links' | 'resultTtlMs' | 'config'>, ctx: Context, opts: { abbreviated?: boolean } = {}): Task {
  return presentFaceLogTaskAt(job, deps, deps.config.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`, opts);
}

/** The task with its links under `base` (outside a request: webhook bodies). */
export function presentFaceLogTaskAt(
  job: JobRecord,
  deps: Pick<JobHttp, 'links' | 'resultTtlMs'>,
  base: string,
  opts: { abbreviated?: boolean } = {},
): Task {
  const task = presentTask(job);
  const input = job.input as Record<string, unknown>;
  // The seed lists start_frame in history entries and completed tasks: every state carries it.
  task.start_frame ??= input.startFrame ?? 0;
  if (job.state === 'failed') {
    // SPEC: a failed face log carries whatever counts are known.
    task.frames = input.frames;
    task.input_video = input.videoName;
    return task;
  }
  if (job.state !== 'done' || !job.result) return task;
  const link = resultLink(job, deps, base);
  for (const field of ['results_video', 'results_xml', 'results_image']) if (task[field] !== undefined) task[field] = link(task[field]);
  const sightings = (task.sightings as Sighting[] | undefined) ?? [];
  task.sightings = opts.abbreviated
    ? sightings.map((s) => ({ sighting_id: s.sighting_id, start_frame: s.start_frame, end_frame: s.end_frame, frames: s.frames }))
    : sightings.map((s) => ({ ...s, thumbnail: link(s.thumbnail) }));
  delete task.number_of_tracks;
  delete task.number_of_faces;
  return task;
}
