// While jobs that write result files run, the queue asks the storage guard every second whether
// free space in DATA_DIR is still above the floor kept for running jobs; below it, those jobs are
// stopped with a DiskFullError (their partial results are removed as they fail). Polling costs
// one statfs a second, and only while such a job runs.
import type { Logger } from 'pino';
import type { DiskFullError } from '../errors.js';

/**
 * 1 s: a 1080p overlay video grows by about 0.25 MB a second (x264 ultrafast, CRF 28), so
 * between two checks the running jobs write a few MB at most, far less than the 256 MiB floor.
 */
const CHECK_INTERVAL_MS = 1000;

export interface DiskWatchOptions {
  /** Null while free space is above the running-job floor, else the error to stop jobs with. */
  check: () => Promise<DiskFullError | null>;
  /** Stops one job (the worker pool's cancel). */
  stop: (jobId: string, reason: DiskFullError) => void;
  logger: Logger;
  intervalMs?: number;
}

export class DiskWatch {
  private readonly jobs = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly options: DiskWatchOptions) {}

  /** A job that writes result files started running. */
  add(jobId: string): void {
    this.jobs.add(jobId);
    if (this.timer) return;
    this.timer = setInterval(() => void this.checkNow(), this.options.intervalMs ?? CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** The job stopped running (finished, failed or re-queued). */
  delete(jobId: string): void {
    this.jobs.delete(jobId);
    if (this.jobs.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private async checkNow(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const full = await this.options.check();
      if (!full) return;
      for (const jobId of this.jobs) {
        this.options.logger.warn({ job_id: jobId }, `stopping the job: ${full.message}`);
        this.options.stop(jobId, full);
        this.delete(jobId); // stopped once; it leaves the queue's books when it has failed
      }
    } catch (err) {
      this.options.logger.warn({ err }, 'cannot read the free disk space of the data directory');
    } finally {
      this.checking = false;
    }
  }
}
