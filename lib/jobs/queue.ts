// The job queue: takes accepted jobs from the store, runs them on the worker pool with bounded
// concurrency, and writes every outcome back to the store. Decides a job's next state by the
// class of its error.
import { EventEmitter, once } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { QueueFullError } from './errors.js';
import { describeError, DiskFullError, ServiceError } from '../errors.js';
import type { StorageGuard } from '../disk-space.js';
import { DiskWatch } from './disk-watch.js';
import type { AnalyticRegistry } from './analytic.js';
import type { JobRecord, JobStore } from './store.js';
import type { WorkerPool } from './worker-pool.js';

export interface JobQueueOptions {
  store: JobStore;
  pool: WorkerPool;
  logger: Logger;
  /** Parallel jobs: one per worker process. */
  concurrency: number;
  /** Jobs waiting or running before submit() refuses. */
  limit: number;
  /** Runs of a job before a crash fails it for good. */
  maxAttempts: number;
  /** The service's analytics: each job's time limit and whether it writes result files. */
  analytics: AnalyticRegistry;
  config: Config;
  /** Called once a job reached its final state (done or failed), e.g. to delete its uploads. */
  onFinished?: (id: string) => Promise<void>;
  /**
   * The disk policy: jobs that write result files do not start, and are stopped while running,
   * below its running-job floor; a job that ran out of space is recorded for /healthz.
   */
  storage?: StorageGuard;
  /** Told the duration and outcome of every run of a job (Prometheus histogram). */
  metrics?: { observeJob(analytic: string, outcome: 'done' | 'failed' | 'retried', seconds: number): void };
}

export class JobQueue {
  private readonly queue: PQueue;
  private readonly finished = new EventEmitter();
  private readonly queuedIds = new Set<string>();
  private stopping = false;
  private readonly diskWatch: DiskWatch | null;

  constructor(private readonly options: JobQueueOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency });
    this.finished.setMaxListeners(0);
    const storage = options.storage;
    this.diskWatch = storage
      ? new DiskWatch({ check: () => storage.runningJobCheck(), stop: (id, reason) => options.pool.cancel(id, reason), logger: options.logger })
      : null;
  }

  /** Jobs waiting or running in this process. */
  get depth(): number {
    return this.queuedIds.size;
  }

  /** Throws QueueFullError when a new job would exceed the limit. Call before accepting an upload. */
  assertCapacity(): void {
    if (this.stopping || this.depth >= this.options.limit) throw new QueueFullError();
  }

  /** Runs again the jobs a previous run of the service accepted but did not finish. */
  resume(): number {
    const jobs = this.options.store.unfinished();
    for (const job of jobs) this.enqueue(job);
    return jobs.length;
  }

  submit(job: JobRecord): void {
    this.enqueue(job);
  }

  /** Resolves true when the job finishes within `ms`, false otherwise. */
  async waitForFinish(id: string, ms: number): Promise<boolean> {
    if (!this.queuedIds.has(id)) return true;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), ms);
    try {
      await once(this.finished, id, { signal: ac.signal });
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops taking jobs; waits up to `graceMs` for running ones. Unfinished jobs stay in the store. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.queue.clear();
    const idle = this.queue.onIdle();
    const grace = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    await Promise.race([idle, grace]);
  }

  private enqueue(job: JobRecord): void {
    if (this.queuedIds.has(job.id)) return;
    this.queuedIds.add(job.id);
    this.schedule(job.id);
  }

  private schedule(id: string): void {
    void this.queue.add(() => this.process(id)).catch((err) => {
      this.options.logger.error({ err, job_id: id }, 'job processing failed outside the analytic');
    });
  }

  private async process(id: string): Promise<void> {
    const { store, pool, maxAttempts, metrics, analytics } = this.options;
    const logger = this.options.logger.child({ job_id: id });
    let retry = false;
    try {
      const job = store.get(id);
      if (!job || (job.state !== 'queued' && job.state !== 'processing')) return;
      if (this.stopping) return; // stays queued for the next start
      if (job.attempts >= maxAttempts) {
        logger.warn({ attempts: job.attempts }, 'job was interrupted too often; failed');
        store.fail(id, {
          code: 'worker_crashed',
          message: `Processing was interrupted ${job.attempts} times (worker crash or service restart); giving up`,
        });
        return;
      }
      const analytic = analytics.get(job.analytic);
      if (!analytic) {
        // A record of an analytic this version does not have (a store shared with another version).
        logger.error({ analytic: job.analytic }, 'job of an unknown analytic; failed');
        store.fail(id, { code: 'internal_error', message: `This service has no analytic named ${job.analytic}` });
        return;
      }
      store.markProcessing(id, 'Processing');
      logger.debug({ analytic: job.analytic, attempt: job.attempts + 1 }, 'job started');
      const started = Date.now();
      const writesResults = analytic.writesResultFiles;
      try {
        if (writesResults && this.options.storage) {
          const full = await this.options.storage.runningJobCheck().catch((err) => {
            logger.warn({ err }, 'cannot read the free disk space of the data directory; the job runs');
            return null;
          });
          if (full) throw full;
          this.diskWatch?.add(id);
        }
        const outcome = await pool.run(
          { jobId: id, analytic: job.analytic, input: job.input },
          { timeoutMs: analytic.timeoutMs(analytic.parseInput(job.input), this.options.config), onProgress: (m) => this.setMessage(id, m, logger), logger },
        );
        this.diskWatch?.delete(id);
        store.complete(id, outcome.message, outcome.result);
        if (writesResults) this.options.storage?.recordResultsWritten();
        metrics?.observeJob(job.analytic, 'done', (Date.now() - started) / 1000);
        logger.info({ analytic: job.analytic, ms: Date.now() - started }, 'job done');
      } catch (err) {
        this.diskWatch?.delete(id);
        retry = this.onJobError(job, err as Error, logger);
        const failed = store.get(id)?.state === 'failed'; // else queued again, now or at the next start
        metrics?.observeJob(job.analytic, failed ? 'failed' : 'retried', (Date.now() - started) / 1000);
      }
    } finally {
      if (retry) {
        this.schedule(id);
      } else {
        await this.options.onFinished?.(id).catch((err) => logger.warn({ err }, 'clean-up after the job failed'));
        this.queuedIds.delete(id);
        this.finished.emit(id);
      }
    }
  }

  /**
   * Progress is the only frequent write to the job database; on a full disk it fails
   * (SQLITE_FULL) and must not take the service down: the job goes on, or fails for the same reason.
   */
  private setMessage(id: string, message: string, logger: Logger): void {
    try {
      this.options.store.setMessage(id, message);
    } catch (err) {
      logger.warn({ err }, 'cannot record the progress of the job');
    }
  }

  /**
   * Records the failure; true when the job should run again. What follows is read from the error
   * itself (lib/errors.ts): a retryable one (the worker died under the job) runs again on a fresh
   * worker up to maxAttempts, or at the next start when the service is stopping; any other fails
   * the job with its code, and with its message when that is exposed.
   */
  private onJobError(job: JobRecord, raw: Error, logger: Logger): boolean {
    const { store, maxAttempts } = this.options;
    const attempts = job.attempts + 1;
    const err = describeError(raw);
    if (err.retryable && this.stopping) {
      logger.info('service stopping; job stays queued for the next start');
      store.requeue(job.id, 'Queued (service restarting)');
    } else if (err.retryable && attempts < maxAttempts) {
      logger.warn({ attempts, code: err.code, reason: err.message }, 'worker crashed; job queued again');
      store.requeue(job.id, `Queued again after a worker crash (attempt ${attempts} of ${maxAttempts})`);
      return true;
    } else if (err.retryable) {
      logger.warn({ attempts, code: err.code }, 'job interrupted again; failed');
      store.fail(job.id, { code: err.code, message: `The analytics worker crashed ${attempts} times on this input; giving up` });
    } else if (err.expose) {
      logger.info({ code: err.code }, `job failed: ${err.message}`);
      // Not a crash: running it again on the same disk would fail again. Its partial results
      // are removed with its uploads (onFinished).
      if (err.code === DiskFullError.CODE) this.options.storage?.recordOutOfSpace(job.id);
      store.fail(job.id, { code: err.code, message: sentence(err.message) });
    } else {
      // A defect (the worker pool has logged the analytic's stack; anything else is logged here).
      if (!(raw instanceof ServiceError)) logger.error({ err: raw }, 'unexpected job error');
      store.fail(job.id, { code: 'internal_error', message: 'The analytic failed with an internal error' });
    }
    return false;
  }
}

function sentence(text: string): string {
  const t = text.trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
}
