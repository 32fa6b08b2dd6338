// The task object of the seed, built from a job record. Analytic-specific result fields are
// stored by the analytic under their seed names and copied as they are.
import { httpDate } from '../../dates.js';
import type { JobRecord } from '../job-record.js';
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
  if (!complete) return task;
  task.finish_time = httpDate(job.finishedAt ?? job.createdAt);
  task.success = job.state === 'done';
  if (job.result) Object.assign(task, job.result);
  if (job.state === 'failed' && job.error) task.error = { code: job.error.code, message: job.error.message };
  return task;
}

/**
 * A finished job's result file as a signed absolute link under `base` (PUBLIC_BASE_URL, or the
 * request's own), valid until the job's results expire.
 */
export function resultLink(job: JobRecord, deps: Pick<JobHttp, 'links' | 'resultTtlMs'>, base: string): (file: unknown) => string {
  const expires = resultsExpireAt(job.finishedAt ?? job.createdAt, deps.resultTtlMs);
  return (file) => deps.links.url(base, job.id, String(file), expires);
}
