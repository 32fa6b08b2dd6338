// Retention of result files: a job's results are deleted RESULT_TTL_DAYS after it finished. The
// task record stays (history still lists it) and its links answer 410 from then on; the results
// route checks the time itself, so a link expires on time even between two sweeps.
import fs from 'node:fs';
import path from 'node:path';
import { runNowAndEvery } from './periodic.js';
import type { Logger } from 'pino';
import type { JobStore } from './store.js';
import { PARTIAL_SUFFIX } from './published-results.js';
import { sweepReferenceFiles } from '../cameras/reference-files.js';


/** How often the sweeper looks for expired results. */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export interface RetentionOptions {
  resultsDir: string;
  /** DATA_DIR: its camera references no row names go too (lib/cameras/reference-files.ts). */
  dataDir?: string;
  ttlMs: number;
  store: JobStore;
  logger: Logger;
  now: () => number;
}

export function resultsExpireAt(finishedAt: number, ttlMs: number): number {
  return finishedAt + ttlMs;
}

/**
 * Deletes expired results and leftovers (unfinished `.partial` folders of finished jobs, folders of
 * unknown jobs). Nodes sharing DATA_DIR sweep one at a time: a node that finds another sweeping
 * skips its turn.
 */
export async function sweepResults(o: RetentionOptions): Promise<number> {
  let removed = 0;
  await o.store.db.exclusive('retention-sweep', async () => {
    removed = await sweepNow(o);
    if (o.dataDir) {
      const references = await sweepReferenceFiles(o.dataDir, o.store.db);
      if (references > 0) o.logger.info({ files: references }, 'removed reference pictures no camera uses');
    }
  });
  return removed;
}

async function sweepNow(o: RetentionOptions): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await fs.promises.readdir(o.resultsDir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const partial = name.endsWith(PARTIAL_SUFFIX);
    const id = partial ? name.slice(0, -PARTIAL_SUFFIX.length) : name;
    const job = await o.store.get(id);
    const finished = job && (job.state === 'done' || job.state === 'failed');
    const expired = finished && o.now() >= resultsExpireAt(job.finishedAt ?? job.createdAt, o.ttlMs);
    const leftover = !job || (finished && partial);
    if (!expired && !leftover) continue;
    await fs.promises.rm(path.join(o.resultsDir, name), { recursive: true, force: true });
    removed++;
    o.logger.info({ job_id: id, reason: expired ? 'expired' : 'leftover' }, 'removed result files');
  }
  return removed;
}

/** Sweeps now and then every SWEEP_INTERVAL_MS; returns a function that stops it. */
export function startRetentionSweeper(o: RetentionOptions, intervalMs = SWEEP_INTERVAL_MS): () => void {
  return runNowAndEvery(intervalMs, () => sweepResults(o), (err) => o.logger.error({ err }, 'result sweep failed'));
}
