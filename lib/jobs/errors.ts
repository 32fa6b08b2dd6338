// Errors that decide a job's next state. The queue decides with `instanceof`, never by message.

/**
 * An analytic could not process its input (bad media, unsupported content). The job fails at
 * once with this code and message; retrying would give the same answer.
 */
export class AnalyticError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The worker process died (native crash, out of memory, killed) while running the job. */
export class WorkerCrashedError extends Error {
  readonly code = 'worker_crashed';
  constructor(message: string) {
    super(message);
    this.name = 'WorkerCrashedError';
  }
}

/** The job ran longer than its analytic's time limit; its worker was killed. */
export class JobTimeoutError extends Error {
  readonly code = 'job_timeout';
  constructor(message: string) {
    super(message);
    this.name = 'JobTimeoutError';
  }
}

/**
 * The disk of DATA_DIR ran out of room while the job wrote its results: a write failed with
 * ENOSPC, or free space fell below the floor kept while jobs run (StorageGuard). The job fails at
 * once and its partial results are removed; running it again on the same disk would fail again.
 */
export class DiskFullError extends AnalyticError {
  static readonly CODE = 'insufficient_storage';
  constructor(message: string, options?: { cause?: unknown }) {
    super(DiskFullError.CODE, message);
    if (options?.cause !== undefined) this.cause = options.cause; // the write that failed, for the log
  }
}
