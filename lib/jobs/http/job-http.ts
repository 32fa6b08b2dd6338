// What the jobs' HTTP face works with: the routes of every analytic (POST to accept a job, GET to
// poll it and list the history) and the downloads of result files.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ResultLinks } from '../../http/result-links.js';
import type { JobQueue } from '../queue.js';
import type { JobStore } from '../store.js';

export interface JobHttp {
  jobs: JobStore;
  queue: JobQueue;
  logger: Logger;
  /** Where accepted jobs keep their files: `<jobsDir>/<job_id>/`. */
  jobsDir: string;
  /** Where finished jobs keep their result files: `<resultsDir>/<job_id>/`. */
  resultsDir: string;
  /** Retention of result files and links (RESULT_TTL_DAYS). */
  resultTtlMs: number;
  links: ResultLinks;
  config: Pick<Config, 'publicBaseUrl' | 'kamcheckWaitMs' | 'webhookAllowedHosts'>;
  /** Parses a multipart upload (lib/http/upload.ts). */
  upload: Middleware;
  /** The clock (tests move it to expire results). */
  now: () => number;
}
