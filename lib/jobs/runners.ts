// Which code runs each analytic inside a worker process. Loaded lazily so a worker pays only
// for the analytics it is asked to run.

export interface AnalyticOutcome {
  /** Completion text for the task's `message`. */
  message: string;
  /** Analytic-specific task fields, stored as the job's result. */
  result: Record<string, unknown>;
}

export type ProgressReporter = (message: string) => void;

export type AnalyticRunner = (
  input: Record<string, unknown>,
  progress: ProgressReporter,
) => Promise<AnalyticOutcome>;

export const runners: Record<string, () => Promise<AnalyticRunner>> = {
  kamcheck: async () => (await import('../kamcheck/job.js')).runKamcheckJob,
  face_log: async () => (await import('../facelog/job.js')).runFaceLogJob,
};
