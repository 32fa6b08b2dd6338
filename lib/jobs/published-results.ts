// Result files of a job: each run writes them into a folder of its own under the job's
// `.partial` folder, and the queue moves that folder into place in the transaction that records
// the run's outcome, after the database has accepted it (JobStore's `publish`). A run that lost
// its lease to another node is refused by the database and never publishes over the other's.
import fs from 'node:fs';
import path from 'node:path';
import type { StagedResults } from './analytic.js';

/** A job's runs write their result files under `<its results folder><PARTIAL_SUFFIX>/<run>`. */
export const PARTIAL_SUFFIX = '.partial';

export function partialResultsDir(jobResultsDir: string): string {
  return `${jobResultsDir}${PARTIAL_SUFFIX}`;
}

/**
 * Moves a run's staged results into place, replacing what an earlier run of the job left there.
 * Synchronous: it runs inside the outcome's transaction. Doing it again after it succeeded (the
 * commit's answer was lost and the outcome is written again) leaves the published results as they are.
 */
export function publishResults(staged: StagedResults): void {
  if (!fs.existsSync(staged.from)) {
    if (fs.existsSync(staged.to)) return;
    throw new Error(`the run's results are missing: ${staged.from}`);
  }
  fs.rmSync(staged.to, { recursive: true, force: true });
  fs.renameSync(staged.from, staged.to);
  // Fails, and leaves it, while another run (or a killed one's leftovers) is in it.
  try {
    fs.rmdirSync(path.dirname(staged.from));
  } catch {
    // not empty
  }
}
