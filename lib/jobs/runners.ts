// Which code runs each analytic inside a worker process. Loaded lazily so a worker pays only
// for the analytics it is asked to run.
import type { Logger } from 'pino';

export interface AnalyticOutcome {
  /** Completion text for the task's `message`. */
  message: string;
  /** Analytic-specific task fields, stored as the job's result. */
  result: Record<string, unknown>;
}

/**
 * Reports progress for the task's `message`. It throws when the service stops the job (e.g. the
 * disk is full): the analytic lets that error through, cleaning up as for any other error.
 */
export type ProgressReporter = (message: string) => void;

/** The job's logger in the worker (its lines carry the job_id and reach the service's log). */
export type JobLogger = Logger;

export type AnalyticRunner = (
  input: Record<string, unknown>,
  progress: ProgressReporter,
  log: JobLogger,
) => Promise<AnalyticOutcome>;

export const runners: Record<string, () => Promise<AnalyticRunner>> = {
  kamcheck: async () => (await import('../kamcheck/job.js')).runKamcheckJob,
  face_log: async () => (await import('../facelog/job.js')).runFaceLogJob,
};

/**
 * Analytics that write result files (results/<job_id>/): they do not start, and are stopped while
 * running, when free disk space is below the running-job floor (lib/disk-space.ts).
 */
export const writesResultFiles: ReadonlySet<string> = new Set(['face_log']);
