// The one door through which an analytic plugs into the job machinery. Each analytic exports a
// descriptor (its folder's analytic.ts, free of OpenCV): its name, how its stored input is read
// back and checked, its time limit, whether it writes result files, and a lazy loader of the code
// a worker process runs. lib/analytics.ts lists them for the queue and the worker process;
// lib/served-analytics.ts pairs each with its routes.
import type { Logger } from 'pino';
import type { Config } from '../config.js';

export interface AnalyticOutcome {
  /** Completion text for the task's `message`. */
  message: string;
  /** Analytic-specific task fields, stored as the job's result. */
  result: Record<string, unknown>;
  /** What the run did beside its result, for the service's modules (the job's `report`), never shown to clients. */
  report?: Record<string, unknown>;
  /**
   * Result files written into a folder of this run's own, and where they belong: the queue moves
   * them there once the database has accepted the outcome (lib/jobs/published-results.ts).
   */
  stagedResults?: StagedResults;
}

export interface StagedResults {
  /** This run's folder under the job's `.partial` folder. */
  from: string;
  /** The job's results folder. */
  to: string;
}

/**
 * Reports progress for the task's `message`. It throws when the service stops the job (e.g. the
 * disk is full): the analytic lets that error through, cleaning up as for any other error.
 */
export type ProgressReporter = (message: string, frames?: FramesProgress) => void;

/** How far a job is in frames: done so far, and in all (null when the video does not say). */
export interface FramesProgress {
  done: number;
  total: number | null;
}

/** Runs one job in a worker process; `log` carries the job_id and reaches the service's log. */
export type AnalyticRunner<Input> = (input: Input, progress: ProgressReporter, log: Logger) => Promise<AnalyticOutcome>;

export interface Analytic<Input = unknown> {
  /** The job record's `analytic` and the API's path segment, e.g. `kamcheck`. */
  readonly name: string;
  /**
   * The job's input as stored (JSON) read back into its type; throws on a record it cannot read.
   * The route checks what it is about to store with it, the worker what it is about to run.
   */
  parseInput(raw: unknown): Input;
  /** Time limit of one run of the job; its worker is killed after it. */
  timeoutMs(input: Input, config: Config): number;
  /**
   * Writes files into results/<job_id>/: such jobs do not start, and are stopped while running,
   * when free disk space is below the running-job floor (lib/disk-space.ts).
   */
  readonly writesResultFiles: boolean;
  /** The worker-side code, loaded on first use (it loads OpenCV). */
  loadRunner(): Promise<AnalyticRunner<Input>>;
}

/** The analytics of the service, by name. */
export class AnalyticRegistry {
  private readonly byName: Map<string, Analytic>;

  constructor(analytics: Analytic<any>[]) {
    this.byName = new Map(analytics.map((a) => [a.name, a as Analytic]));
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get(name: string): Analytic | undefined {
    return this.byName.get(name);
  }
}
