// Messages between the worker pool (main process) and a worker process.
import type { FramesProgress } from './analytic.js';
import type { AnalyticOutcome } from './analytic.js';

export interface WorkerRequest {
  type: 'run';
  jobId: string;
  analytic: string;
  input: Record<string, unknown>;
}

/**
 * Stop the job now (the disk is full): the worker makes its progress reporter throw, so the
 * analytic cleans up on its way out, and answers `failed` with this code and message. The pool
 * kills a worker that has not answered within a few seconds.
 */
export interface WorkerCancel {
  type: 'cancel';
  jobId: string;
  code: string;
  message: string;
}

export type WorkerReply =
  | { type: 'ready' }
  /** A pino log record of the worker (with its job_id binding); the pool writes it to the service's log. */
  | { type: 'log'; record: Record<string, unknown> }
  | { type: 'progress'; jobId: string; message: string; frames?: FramesProgress }
  | { type: 'done'; jobId: string; outcome: AnalyticOutcome }
  | {
      type: 'failed';
      jobId: string;
      code: string;
      message: string;
      /** The message may be shown to clients (bad input, a full disk); false for a defect, logged with its stack. */
      expose: boolean;
      stack?: string;
    };
