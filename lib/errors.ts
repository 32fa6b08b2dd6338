// Errors that describe themselves, as koa's context.onerror reads them: each carries the HTTP
// `status` it answers with, a stable snake_case `code`, whether its message may be shown
// (`expose`), the `headers` to send with it (e.g. Retry-After) and, for a job, whether running
// the job again may succeed (`retryable`). The HTTP error handler (http/app.ts) and the job queue
// read these properties; neither keeps a list of classes.

export interface ErrorDescription {
  /** HTTP status of the answer when the error reaches a client. */
  status: number;
  /** Stable snake_case code: the error envelope's `error.code`, a failed task's `error.code`. */
  code: string;
  /** The message is safe to show to clients; otherwise a generic text is, and the log has the rest. */
  expose: boolean;
  headers: Record<string, string>;
  /** A job that failed with it may succeed on another run (a fresh worker). */
  retryable: boolean;
}

export interface ServiceErrorOptions extends Partial<Omit<ErrorDescription, 'code'>> {
  cause?: unknown;
}

export class ServiceError extends Error implements ErrorDescription {
  readonly status: number;
  readonly expose: boolean;
  readonly headers: Record<string, string>;
  readonly retryable: boolean;

  constructor(
    readonly code: string,
    message: string,
    options: ServiceErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status ?? 500;
    this.expose = options.expose ?? false;
    this.headers = options.headers ?? {};
    this.retryable = options.retryable ?? false;
  }
}

/** What the error handler and the queue know of any thrown value: its own description, or an internal error. */
export function describeError(err: unknown): ErrorDescription & { message: string } {
  if (err instanceof ServiceError) return err;
  return { status: 500, code: 'internal_error', expose: false, headers: {}, retryable: false, message: String((err as Error)?.message ?? err) };
}

/**
 * A value a client sent that a module cannot take (a camera's stream URL, say): 400
 * `invalid_parameter`, whether the module read it from a request or not.
 */
export class InvalidInputError extends ServiceError {
  constructor(message: string) {
    super('invalid_parameter', message, { status: 400, expose: true });
  }
}

/**
 * An analytic could not process its input (bad media, unsupported content): the job fails at once
 * with this code and message; running it again would give the same answer.
 */
export class AnalyticError extends ServiceError {
  constructor(code: string, message: string, options: ServiceErrorOptions = {}) {
    super(code, message, { status: 422, expose: true, ...options });
  }
}

/**
 * The disk of DATA_DIR ran out of room while the job wrote its results: a write failed with
 * ENOSPC, or free space fell below the floor kept while jobs run (StorageGuard). The job fails at
 * once and its partial results are removed; running it again on the same disk would fail again.
 */
export class DiskFullError extends AnalyticError {
  static readonly CODE = 'insufficient_storage';
  constructor(message: string, options: ServiceErrorOptions = {}) {
    super(DiskFullError.CODE, message, { status: 507, ...options });
  }

  /** A write of the job's results failed for want of space; `cause` is that write's error, for the log. */
  static writeFailed(cause: unknown): DiskFullError {
    return new DiskFullError(
      'the disk of the appliance is full: the results could not be written (no space left on device); ' +
        'the job was stopped and its partial results removed. Submit it again when space has been freed',
      { cause },
    );
  }
}
