// A job's folders on disk: its uploads in `<jobsDir>/<job_id>/input/`, its results in
// `<resultsDir>/<job_id>/` (written first into a `.partial` folder: published-results.ts). What a
// finished or failed job, a crash or a stop leaves behind is removed here.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { PARTIAL_SUFFIX, partialResultsDir } from './published-results.js';
import type { JobStore } from './store.js';

/**
 * An upload folder without a job record younger than this may belong to an upload another node
 * is accepting right now (DATA_DIR shared): start-up clean-up leaves it alone.
 */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

/**
 * A finished job needs its uploads no more (results, if any, live beside them): deleting them
 * keeps the disk from filling with clips. The job's folder goes too when nothing else is in it.
 * Partial results go as well: the face log removes its own when its frame loop fails, but not
 * when a later write fails (a thumbnail on a full disk) or its worker was killed (crash, time
 * limit, a disk-full stop that did not end in time).
 */
export async function removeJobFiles(jobsDir: string, resultsDir: string, id: string): Promise<void> {
  const dir = path.join(jobsDir, id);
  await fs.promises.rm(path.join(dir, 'input'), { recursive: true, force: true });
  if (fs.existsSync(dir) && fs.readdirSync(dir).length === 0) await fs.promises.rmdir(dir);
  await fs.promises.rm(partialResultsDir(path.join(resultsDir, id)), { recursive: true, force: true });
}

/** Results a run of this box left half written (one box: no other node may be writing them now). */
export function removePartialResults(resultsDir: string): void {
  for (const name of fs.readdirSync(resultsDir)) {
    if (name.endsWith(PARTIAL_SUFFIX)) fs.rmSync(path.join(resultsDir, name), { recursive: true, force: true });
  }
}

/**
 * Job folders without a record (a crash hit between moving the upload and writing the record) and
 * folders of finished jobs (a stop hit between the job's end and the removal of its uploads).
 * With a shared DATA_DIR a folder without a record may be an upload another node is accepting:
 * only old ones go.
 */
export async function removeStaleJobFolders(jobsDir: string, jobs: JobStore, shared: boolean, logger: Logger): Promise<void> {
  for (const name of fs.readdirSync(jobsDir)) {
    const dir = path.join(jobsDir, name);
    const state = (await jobs.get(name))?.state;
    if (state === 'queued' || state === 'processing') continue;
    if (!state && shared && Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0) < ORPHAN_AGE_MS) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    if (state) logger.info({ job_id: name }, 'removed the uploads of a finished job');
    else logger.info({ job_id: name }, 'removed the files of an upload that never became a job');
  }
}
