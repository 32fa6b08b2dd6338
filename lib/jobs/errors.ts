// How a job can fail outside its analytic, and the full queue. Each error says what follows from
// it (lib/errors.ts): the queue reads `retryable`, `code` and `expose`, never the class.
import { ServiceError } from '../errors.js';

/** The worker process died (native crash, out of memory, killed) while running the job: another run may succeed. */
export class WorkerCrashedError extends ServiceError {
  constructor(message: string) {
    super('worker_crashed', message, { expose: true, retryable: true });
  }
}

/** The job ran longer than its analytic's time limit; its worker was killed. */
export class JobTimeoutError extends ServiceError {
  constructor(limitMs: number) {
    super('job_timeout', `Processing took too long: processing took longer than ${Math.round(limitMs / 1000)} s`, { expose: true });
  }
}

/**
 * The worker's resident memory went past WORKER_MEMORY_MB while it ran the job: the job stopped at
 * its next progress report (between frames) and its worker is replaced. Not retried: the job would
 * need as much on any node with the same bound.
 */
export class MemoryLimitError extends ServiceError {
  constructor(rssBytes: number, limitBytes: number) {
    super(
      'memory_limit',
      `The job needed more memory than a worker may use: ${mib(rssBytes)} MiB resident, over the bound of ${mib(limitBytes)} MiB (WORKER_MEMORY_MB); a shorter or smaller video may fit`,
      { expose: true },
    );
  }
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** The analytic failed because of a bug (not bad input): clients see a generic text, the log has the details. */
export class AnalyticCrashError extends ServiceError {
  constructor(message: string) {
    super('internal_error', message);
  }
}

/** Seconds a client is told to wait when the queue is full. */
export const RETRY_AFTER_SECONDS = 5;

/** The queue is full; the client should retry after RETRY_AFTER_SECONDS. */
export class QueueFullError extends ServiceError {
  constructor(readonly retryAfterSeconds = RETRY_AFTER_SECONDS) {
    super('busy', 'the job queue is full; retry later', { status: 503, expose: true, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}
