// A job as the service keeps it: its record, the columns it is read from, and the claim that fences
// every write about a running attempt (lib/jobs/store.ts writes them).

export type JobState = 'queued' | 'processing' | 'done' | 'failed';

export interface JobFailure {
  code: string;
  message: string;
}

export interface JobRecord {
  id: string;
  analytic: string;
  state: JobState;
  /** Times a worker has started this job; the current attempt while it is processing. */
  attempts: number;
  createdAt: number;
  finishedAt: number | null;
  /** Progress text while running; the completion text when done. */
  message: string;
  /** What the analytic needs: file paths, original names, parameters. */
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: JobFailure | null;
  /**
   * What the worker reports it did beside its result, for the service's modules and never shown
   * to clients (a tamper check that wrote a camera's renewed reference says so here).
   */
  report: Record<string, unknown> | null;
  /** When the current (or last) attempt started, ms. */
  startedAt: number | null;
  /** The node holding (or last holding) the job's lease. */
  leaseOwner: string | null;
  /** While it runs: the frames its worker has done and will do in all (null when unknown), and when it said so. */
  progress: JobProgress | null;
}

export interface JobProgress {
  done: number;
  total: number | null;
  /** When the worker reported it, ms. */
  at: number;
  /** The attempt's first report: the rate is measured from there, after the models have loaded. */
  from?: { done: number; at: number };
}

export interface Claim {
  id: string;
  attempt: number;
}

export interface NewJob {
  id: string;
  analytic: string;
  input: Record<string, unknown>;
  createdAt?: number;
}

export interface JobRow {
  id: string;
  analytic: string;
  state: JobState;
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  message: string;
  input: string;
  result: string | null;
  error: string | null;
  report: string | null;
  lease_owner: string | null;
  progress?: string | null;
}

export function jobFromRow(row: JobRow): JobRecord {
  return {
    id: row.id,
    analytic: row.analytic,
    state: row.state,
    attempts: row.attempts,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    message: row.message,
    input: JSON.parse(row.input),
    result: row.result ? JSON.parse(row.result) : null,
    error: row.error ? JSON.parse(row.error) : null,
    report: row.report ? JSON.parse(row.report) : null,
    startedAt: row.started_at,
    leaseOwner: row.lease_owner,
    progress: row.progress ? JSON.parse(row.progress) : null,
  };
}
