// Retention of task records: finished jobs older than RECORD_RETENTION_DAYS are deleted, with
// what points at them (a camera's check of the job), at start and then hourly, by one node at a
// time. The newest KEEP_PER_ANALYTIC of each analytic stay (the history contract), and so do
// cameras, their state and their references. Deletes go in small batches with a pause between
// them, so that a request waits behind one batch at most; then SQLite gives the freed pages back.
// Result files have their own retention (retention.ts), which removes the folders of jobs that
// no longer have a record.
import { runNowAndEvery } from './periodic.js';
import type { Logger } from 'pino';
import type { JobStore } from './store.js';

/** The history contract: GET /<analytic> answers the last 50 tasks. */
export const KEEP_PER_ANALYTIC = 50;
/**
 * Jobs deleted per transaction: the wait a request can have behind one batch. Deleting a day's
 * rows from a store of 2 million, the longest batch of 500 took 31 ms on SQLite and 25 ms on
 * PostgreSQL, and no request waited more than 38 ms (bench-store).
 */
export const PURGE_BATCH = 500;
/** Pause between two batches: requests queued behind one run before the next. */
const PAUSE_MS = 20;
export const RECORD_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** An Idempotency-Key answers its first task for this long. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface RecordRetentionOptions {
  store: JobStore;
  retentionMs: number;
  logger: Logger;
  now?: () => number;
}

export interface RecordSweep {
  /** Job records deleted. */
  deleted: number;
  batches: number;
  /** The longest batch, ms: about the longest a request waited behind the sweep. */
  longestBatchMs: number;
  /** False when another node was sweeping (it did the work). */
  ran: boolean;
}

export async function sweepRecords(o: RecordRetentionOptions): Promise<RecordSweep> {
  const now = o.now ?? Date.now;
  const sweep: RecordSweep = { deleted: 0, batches: 0, longestBatchMs: 0, ran: false };
  sweep.ran = await o.store.db.exclusive('record-retention', async () => {
    const before = now() - o.retentionMs;
    for (;;) {
      const started = performance.now();
      const deleted = await o.store.purgeFinished(before, KEEP_PER_ANALYTIC, PURGE_BATCH);
      sweep.longestBatchMs = Math.max(sweep.longestBatchMs, performance.now() - started);
      if (deleted === 0) break;
      sweep.deleted += deleted;
      sweep.batches++;
      if (deleted < PURGE_BATCH) break;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
    await o.store.forgetIdempotencyKeys(now() - IDEMPOTENCY_WINDOW_MS);
    if (sweep.deleted > 0) {
      await o.store.db.reclaimSpace();
      o.logger.info({ deleted: sweep.deleted, batches: sweep.batches }, 'deleted task records past RECORD_RETENTION_DAYS');
    }
  });
  return sweep;
}

/** Sweeps now and then every RECORD_SWEEP_INTERVAL_MS; returns a function that stops it. */
export function startRecordRetention(o: RecordRetentionOptions, intervalMs = RECORD_SWEEP_INTERVAL_MS): () => void {
  return runNowAndEvery(intervalMs, () => sweepRecords(o), (err) => o.logger.error({ err }, 'task record sweep failed'));
}
