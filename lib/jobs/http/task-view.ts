// The task object of the seed, built from a job record. Analytic-specific result fields are
// stored by the analytic under their seed names and copied as they are.
import { httpDate } from '../../dates.js';
import type { JobProgress, JobRecord } from '../job-record.js';
import { resultsExpireAt } from '../retention.js';
import type { JobHttp } from './job-http.js';

export type Task = Record<string, unknown>;

export function presentTask(job: JobRecord): Task {
  const complete = job.state === 'done' || job.state === 'failed';
  const task: Task = {
    analytic: job.analytic,
    job_id: job.id,
    complete,
    message: job.message,
    start_time: httpDate(job.createdAt),
  };
  // Fields the service set at the upload (a camera check's camera and reference).
  const fixed = job.input.taskFields;
  if (fixed && typeof fixed === 'object') Object.assign(task, fixed);
  if (!complete) {
    if (job.state === 'processing' && job.progress) task.progress = presentProgress(job.progress);
    return task;
  }
  task.finish_time = httpDate(job.finishedAt ?? job.createdAt);
  task.success = job.state === 'done';
  if (job.result) Object.assign(task, job.result);
  if (job.state === 'failed' && job.error) task.error = { code: job.error.code, message: job.error.message };
  return task;
}

/** Seconds of counting frames before a time left is estimated: a rate of fewer is noise. */
export const ETA_AFTER_S = 3;

/**
 * How far a running job is: frames done and in all, the share done, and the time left at the rate
 * since the attempt's first count of frames (the models' loading is not in it), once that has run
 * ETA_AFTER_S and the total is known; from the worker's last report.
 */
export function presentProgress(p: JobProgress): Record<string, unknown> {
  const percent = p.total ? Math.min(100, Math.round((1000 * p.done) / p.total) / 10) : null;
  const countedS = p.from ? (p.at - p.from.at) / 1000 : 0;
  const counted = p.from ? p.done - p.from.done : 0;
  const left = p.total && counted > 0 && countedS >= ETA_AFTER_S ? Math.max(0, Math.round((countedS * (p.total - p.done)) / counted)) : null;
  return { frames_done: p.done, frames_total: p.total, percent, eta_s: left };
}

/**
 * A finished job's result file as a signed absolute link under `base` (PUBLIC_BASE_URL, or the
 * request's own), valid until the job's results expire.
 */
export function resultLink(job: JobRecord, deps: Pick<JobHttp, 'links' | 'resultTtlMs'>, base: string): (file: unknown) => string {
  const expires = resultsExpireAt(job.finishedAt ?? job.createdAt, deps.resultTtlMs);
  return (file) => deps.links.url(base, job.id, String(file), expires);
}
