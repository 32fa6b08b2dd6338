// Retention of the jobs module, one duty (`jobs.retention`, at start and hourly, on one node at a
// time: lib/duty-runner.ts):
// - task records: finished jobs older than RECORD_RETENTION_DAYS are deleted, with what points at
//   them (a camera's check of the job, JobStore.onPurge), except the newest KEEP_PER_ANALYTIC of
//   each analytic (the history contract). Deletes go in small batches with a pause between them,
//   so that a request waits behind one batch at most; then SQLite gives the freed pages back;
// - idempotency keys older than their window;
// - result files, RESULT_TTL_DAYS after their job finished. The task record stays (history still
//   lists it) and its links answer 410 from then on; the results route checks the time itself, so
//   a link expires on time even between two sweeps. Unfinished `.partial` folders of finished jobs
//   and folders of jobs without a record (deleted above) go too.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Duty } from '../duty-runner.js';
import type { JobStore } from './store.js';
import { PARTIAL_SUFFIX } from './published-results.js';

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
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** An Idempotency-Key answers its first task for this long. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  store: JobStore;
  /** RECORD_RETENTION_DAYS in ms. */
  recordRetentionMs: number;
  /** Where finished jobs keep their result files: `<resultsDir>/<job_id>/`. */
  resultsDir: string;
  /** RESULT_TTL_DAYS in ms. */
  resultTtlMs: number;
  logger: Logger;
  /** The clock (tests move it forward). */
  now: () => number;
  /** Gives the space of deleted rows back to the file system (Database.reclaimSpace). */
  reclaimSpace?: () => Promise<void>;
}

export function resultsExpireAt(finishedAt: number, ttlMs: number): number {
  return finishedAt + ttlMs;
}

export function retentionDuty(o: RetentionOptions): Duty {
  return {
    name: 'jobs.retention',
    intervalMs: RETENTION_INTERVAL_MS,
    atStart: true,
    run: async (signal) => {
      const records = await sweepRecords(o, signal);
      const resultFolders = await sweepResultFiles(o, signal);
      return { records: records.deleted, result_folders: resultFolders };
    },
  };
}

export interface RecordSweep {
  /** Job records deleted. */
  deleted: number;
  batches: number;
  /** The longest batch, ms: about the longest a request waited behind the sweep. */
  longestBatchMs: number;
}

/** Deletes the records past their retention, in batches, and the expired idempotency keys. */
export async function sweepRecords(o: Pick<RetentionOptions, 'store' | 'recordRetentionMs' | 'logger' | 'now' | 'reclaimSpace'>, signal?: AbortSignal): Promise<RecordSweep> {
  const sweep: RecordSweep = { deleted: 0, batches: 0, longestBatchMs: 0 };
  const before = o.now() - o.recordRetentionMs;
  while (!signal?.aborted) {
    const started = performance.now();
    const deleted = await o.store.purgeFinished(before, KEEP_PER_ANALYTIC, PURGE_BATCH);
    sweep.longestBatchMs = Math.max(sweep.longestBatchMs, performance.now() - started);
    if (deleted === 0) break;
    sweep.deleted += deleted;
    sweep.batches++;
    if (deleted < PURGE_BATCH) break;
    await new Promise((r) => setTimeout(r, PAUSE_MS));
  }
  await o.store.forgetIdempotencyKeys(o.now() - IDEMPOTENCY_WINDOW_MS);
  if (sweep.deleted > 0) {
    await o.reclaimSpace?.();
    o.logger.info({ deleted: sweep.deleted, batches: sweep.batches }, 'deleted task records past RECORD_RETENTION_DAYS');
  }
  return sweep;
}

/** Deletes expired results and leftovers; resolves with the folders removed. */
export async function sweepResultFiles(o: Pick<RetentionOptions, 'store' | 'resultsDir' | 'resultTtlMs' | 'logger' | 'now'>, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await fs.promises.readdir(o.resultsDir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (signal?.aborted) break;
    const partial = name.endsWith(PARTIAL_SUFFIX);
    const id = partial ? name.slice(0, -PARTIAL_SUFFIX.length) : name;
    const job = await o.store.get(id);
    const finished = job && (job.state === 'done' || job.state === 'failed');
    const expired = finished && o.now() >= resultsExpireAt(job.finishedAt ?? job.createdAt, o.resultTtlMs);
    const leftover = !job || (finished && partial);
    if (!expired && !leftover) continue;
    await fs.promises.rm(path.join(o.resultsDir, name), { recursive: true, force: true });
    removed++;
    o.logger.info({ job_id: id, reason: expired ? 'expired' : 'leftover' }, 'removed result files');
  }
  return removed;
}
