// The job queue of one node: claims jobs from the store while it has free workers, runs them on
// its worker pool, keeps their leases alive, and writes every outcome back, fenced by the claim's
// attempt. Decides a job's next state by the class of its error. The store wakes it when a job is
// queued anywhere; it also polls, to take over jobs whose owner died with their lease.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { QueueFullError } from './errors.js';
import { DatabaseUnavailableError } from '../db/errors.js';
import { publishResults } from './published-results.js';
import { describeError, DiskFullError, ServiceError } from '../errors.js';
import type { StorageGuard } from '../disk-space.js';
import { DiskWatch } from './disk-watch.js';
import type { AnalyticRegistry } from './analytic.js';
import type { Claim, JobRecord } from './job-record.js';
import type { JobStore } from './store.js';
import type { WorkerPool } from './worker-pool.js';

export interface JobQueueOptions {
  store: JobStore;
  pool: WorkerPool;
  logger: Logger;
  /** This node's name on the leases it holds (NODE_ID). */
  nodeId: string;
  /** Parallel jobs on this node: one per worker process; 0 claims none (an API-only node). */
  concurrency: number;
  /** Jobs waiting or running, on every node, before submissions are refused. */
  limit: number;
  /** Runs of a job before a crash fails it for good. */
  maxAttempts: number;
  /** How long a claim holds a job without a heartbeat; renewed every third of it while the job runs. */
  leaseMs: number;
  /** How often the node looks for claimable jobs without being told (expired leases, missed notifications). @defaultValue 1000 */
  pollMs?: number;
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

/** The attempt lost its lease to another node while it ran: nothing it did is recorded. */
export class LeaseLostError extends ServiceError {
  constructor() {
    super('lease_lost', 'the job was taken over by another node after its lease ran out', { expose: true });
  }
}

/** How long a write of an outcome is retried while the database does not answer. */
const OUTCOME_RETRY_MS = 10 * 60 * 1000;

export class JobQueue {
  /** Runs in progress on this node, by job id. */
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private started = false;
  private pumping = false;
  private pumpAgain = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly diskWatch: DiskWatch | null;

  constructor(private readonly options: JobQueueOptions) {
    const storage = options.storage;
    this.diskWatch = storage
      ? new DiskWatch({ check: () => storage.runningJobCheck(), stop: (id, reason) => options.pool.cancel(id, reason), logger: options.logger })
      : null;
  }

  /** Jobs running on this node now. */
  get runningHere(): number {
    return this.running.size;
  }

  /** Jobs waiting or running on every node. */
  depth(): Promise<number> {
    return this.options.store.unfinishedCount();
  }

  /** Throws QueueFullError when a new job would exceed the limit. Call before accepting an upload. */
  async assertCapacity(): Promise<void> {
    if (this.stopping || (await this.depth()) >= this.options.limit) throw new QueueFullError();
  }

  /**
   * Starts claiming. The leases this node's previous run held are released first, so the jobs it
   * was running when it died run again now rather than after their lease; resolves with how many.
   */
  async start(): Promise<number> {
    const { store, nodeId, pollMs = 1000 } = this.options;
    const released = await store.releaseLeases(nodeId);
    this.started = true;
    this.unsubscribe = store.subscribe((event) => {
      if (event.type !== 'finished') this.pump();
    });
    this.pollTimer = setInterval(() => this.pump(), pollMs);
    this.pollTimer.unref();
    this.pump();
    return released;
  }

  /**
   * Resolves true when the job is finished (on any node) within `ms`, false otherwise. A job that
   * ran on this node is finished once its clean-up is done too (its uploads are gone).
   */
  async waitForFinish(id: string, ms: number): Promise<boolean> {
    const finished = await this.waitForRecord(id, ms);
    if (finished) await this.running.get(id);
    return finished;
  }

  private async waitForRecord(id: string, ms: number): Promise<boolean> {
    const { store } = this.options;
    const isFinished = async () => {
      const state = (await store.get(id).catch(() => null))?.state;
      return state === 'done' || state === 'failed';
    };
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const settle = (finished: boolean) => {
        if (settled) return;
        settled = true;
        off();
        clearTimeout(timer);
        clearInterval(poll);
        resolve(finished);
      };
      const recheck = () => void isFinished().then((done) => done && settle(true));
      const off = store.subscribe((event) => {
        if (event.type === 'finished' && event.id === id) settle(true);
        else if (event.type === 'reconnected') recheck();
      });
      const timer = setTimeout(() => settle(false), ms);
      // Notifications are not guaranteed across a lost connection: look now and then as well.
      const poll = setInterval(recheck, 500);
      recheck();
    });
  }

  /** Stops claiming; waits up to `graceMs` for running jobs. Unfinished jobs stay in the store. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.unsubscribe?.();
    await this.settled(graceMs);
  }

  /** Resolves when every run on this node has written its outcome, or after `ms`. */
  async settled(ms: number): Promise<void> {
    const grace = new Promise<void>((r) => setTimeout(r, ms).unref());
    await Promise.race([Promise.allSettled([...this.running.values()]), grace]);
  }

  /** Claims jobs while this node has free workers. Calls that arrive while it runs make it look once more. */
  private pump(): void {
    if (!this.started || this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      const { store, nodeId, leaseMs, concurrency, logger } = this.options;
      try {
        do {
          this.pumpAgain = false;
          while (!this.stopping && this.running.size < concurrency) {
            const job = await store.claim(nodeId, leaseMs);
            if (!job) break;
            const run = this.process(job).catch((err) => logger.error({ err, job_id: job.id }, 'job processing failed outside the analytic'));
            this.running.set(job.id, run);
            void run.finally(() => {
              this.running.delete(job.id);
              this.pump();
            });
          }
        } while (this.pumpAgain && !this.stopping);
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) logger.debug({ err: (err as Error).message }, 'cannot claim jobs: the database does not answer');
        else logger.error({ err }, 'claiming a job failed');
      } finally {
        this.pumping = false;
      }
    })();
  }

  private async process(job: JobRecord): Promise<void> {
    const { store, pool, maxAttempts, metrics, analytics } = this.options;
    const claim: Claim = { id: job.id, attempt: job.attempts };
    const logger = this.options.logger.child({ job_id: job.id, attempt: job.attempts });
    // Runs before this one that ended without an outcome: the worker or the node died under them.
    const interrupted = job.attempts - 1;
    if (interrupted >= maxAttempts) {
      logger.warn({ attempts: interrupted }, 'job was interrupted too often; failed');
      await this.finishWith(claim, logger, () =>
        store.fail(claim, {
          code: 'worker_crashed',
          message: `Processing was interrupted ${interrupted} times (worker crash or service restart); giving up`,
        }),
      );
      return;
    }
    const analytic = analytics.get(job.analytic);
    if (!analytic) {
      // A record of an analytic this version does not have (a store shared with another version).
      logger.error({ analytic: job.analytic }, 'job of an unknown analytic; failed');
      await this.finishWith(claim, logger, () => store.fail(claim, { code: 'internal_error', message: `This service has no analytic named ${job.analytic}` }));
      return;
    }
    logger.debug({ analytic: job.analytic }, 'job started');
    const started = Date.now();
    const writesResults = analytic.writesResultFiles;
    const heartbeat = this.keepLease(claim, logger);
    try {
      if (writesResults && this.options.storage) {
        const full = await this.options.storage.runningJobCheck().catch((err) => {
          logger.warn({ err }, 'cannot read the free disk space of the data directory; the job runs');
          return null;
        });
        if (full) throw full;
        this.diskWatch?.add(job.id);
      }
      let firstReport: { done: number; at: number } | null = null;
      const outcome = await pool.run(
        { jobId: job.id, analytic: job.analytic, input: job.input },
        {
          timeoutMs: analytic.timeoutMs(analytic.parseInput(job.input), this.options.config),
          onProgress: (m, frames) => {
            // the attempt's first count of frames: the time left is reckoned from there, not from the models' loading
            if (frames && !firstReport) firstReport = { done: frames.done, at: Date.now() };
            void store.setMessage(claim, m, frames ? { ...frames, from: firstReport! } : null).catch((err) => logger.warn({ err: (err as Error).message }, 'cannot record the progress of the job'));
          },
          logger,
        },
      );
      this.diskWatch?.delete(job.id);
      heartbeat.stop();
      if (heartbeat.lost) throw new LeaseLostError();
      // The disk report clears as the completion lands, before the clean-up: a client that sees
      // the job done sees a healthy disk too.
      const staged = outcome.stagedResults;
      const finishing = { report: outcome.report ?? null, publish: staged ? () => publishResults(staged) : undefined };
      const recorded = await this.finishWith(claim, logger, () => store.complete(claim, outcome.message, outcome.result, finishing), () => {
        if (writesResults) this.options.storage?.recordResultsWritten();
      });
      metrics?.observeJob(job.analytic, 'done', (Date.now() - started) / 1000);
      if (recorded) logger.info({ analytic: job.analytic, ms: Date.now() - started }, 'job done');
    } catch (err) {
      this.diskWatch?.delete(job.id);
      heartbeat.stop();
      if (heartbeat.lost) {
        logger.warn('job taken over by another node after its lease ran out; this run is discarded');
        return;
      }
      const failed = await this.onJobError(job, claim, err as Error, logger);
      metrics?.observeJob(job.analytic, failed ? 'failed' : 'retried', (Date.now() - started) / 1000);
    }
  }

  /**
   * Renews the claim's lease every third of it while the job runs. A renewal the database refuses
   * means another node took the job: this run is cancelled and its outcome discarded. A renewal
   * that cannot reach the database is tried again at the next beat.
   */
  private keepLease(claim: Claim, logger: Logger): { stop(): void; readonly lost: boolean } {
    const { store, pool, leaseMs } = this.options;
    let lost = false;
    const timer = setInterval(() => {
      store.renew(claim, leaseMs).then(
        (held) => {
          if (held || lost) return;
          lost = true;
          logger.warn('the job lease was lost; stopping this run');
          pool.cancel(claim.id, new LeaseLostError());
        },
        (err) => logger.warn({ err: (err as Error).message }, 'cannot renew the job lease; trying again'),
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    timer.unref();
    return {
      stop: () => clearInterval(timer),
      get lost() {
        return lost;
      },
    };
  }

  /**
   * Writes a final outcome, trying again while the database does not answer (a restart) so that a
   * finished job is not run again for want of a connection. False when another attempt holds the
   * job: the outcome is discarded. The job's uploads are removed once it is final.
   */
  private async finishWith(claim: Claim, logger: Logger, write: () => Promise<boolean>, onRecorded?: () => void): Promise<boolean> {
    const recorded = await this.retryWhileUnavailable(write, logger);
    if (!recorded) {
      logger.warn('the job is no longer held by this attempt (lease ran out); its outcome is discarded');
      return false;
    }
    onRecorded?.();
    await this.options.onFinished?.(claim.id).catch((err) => logger.warn({ err }, 'clean-up after the job failed'));
    return true;
  }

  private async retryWhileUnavailable(write: () => Promise<boolean>, logger: Logger): Promise<boolean> {
    const deadline = Date.now() + OUTCOME_RETRY_MS;
    for (let warned = false; ; ) {
      try {
        return await write();
      } catch (err) {
        if (!(err instanceof DatabaseUnavailableError) || Date.now() > deadline) throw err;
        if (!warned) logger.warn('the database does not answer; writing the outcome again shortly');
        warned = true;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /**
   * Records the failure; resolves true when the job failed for good. What follows is read from
   * the error itself (lib/errors.ts): a retryable one (the worker died under the job) goes back to
   * the queue for a fresh worker on any node, up to maxAttempts; any other fails the job with its
   * code, and with its message when that is exposed.
   */
  private async onJobError(job: JobRecord, claim: Claim, raw: Error, logger: Logger): Promise<boolean> {
    const { store, maxAttempts } = this.options;
    const attempts = job.attempts;
    const err = describeError(raw);
    const fail = (code: string, message: string) => this.finishWith(claim, logger, () => store.fail(claim, { code, message }));
    if (err.retryable && this.stopping) {
      logger.info('node stopping; job queued again');
      await this.retryWhileUnavailable(() => store.requeue(claim, 'Queued (service restarting)'), logger);
      return false;
    }
    if (err.retryable && attempts < maxAttempts) {
      logger.warn({ attempts, code: err.code, reason: err.message }, 'worker crashed; job queued again');
      await this.retryWhileUnavailable(() => store.requeue(claim, `Queued again after a worker crash (attempt ${attempts} of ${maxAttempts})`), logger);
      return false;
    }
    if (err.retryable) {
      logger.warn({ attempts, code: err.code }, 'job interrupted again; failed');
      await fail(err.code, `The analytics worker crashed ${attempts} times on this input; giving up`);
    } else if (err.expose) {
      logger.info({ code: err.code }, `job failed: ${err.message}`);
      // Not a crash: running it again on the same disk would fail again. Its partial results
      // are removed with its uploads (onFinished).
      if (err.code === DiskFullError.CODE) this.options.storage?.recordOutOfSpace(job.id);
      await fail(err.code, sentence(err.message));
    } else {
      // A defect (the worker pool has logged the analytic's stack; anything else is logged here).
      if (!(raw instanceof ServiceError)) logger.error({ err: raw }, 'unexpected job error');
      await fail('internal_error', 'The analytic failed with an internal error');
    }
    return true;
  }
}

function sentence(text: string): string {
  const t = text.trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
}
