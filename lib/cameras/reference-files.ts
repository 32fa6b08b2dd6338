// Reference pictures on disk: DATA_DIR/references/<2 hex>/<uuid>.<ext>, and the pictures of stream
// captures in DATA_DIR/captures, alike. Names never come from the
// client (a camera id may be anything the VMS uses), and a row in camera_references says which
// files are current. A file whose row is gone (pruned past REFERENCES_PER_SLOT, or its camera
// deleted) is removed by the sweep once no queued check can still be reading it.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../db/database.js';
import { listedReferenceFiles } from './camera-store.js';
import { listedCaptureFiles } from './source-store.js';

export const REFERENCES_DIR = 'references';
export const CAPTURES_DIR = 'captures';

/**
 * How long a file without a row is kept: a check chose it at its upload and may still be queued
 * or running (tamper checks run within seconds; a full queue of 500 waits minutes).
 */
export const UNLISTED_REFERENCE_GRACE_MS = 60 * 60 * 1000;

export interface ReferenceFile {
  id: string;
  /** Relative to DATA_DIR, as rows store it. */
  file: string;
  absolute: string;
}

/** A new reference's place (its folder created); `ext` is `jpg` or `png`. */
export function newReferenceFile(dataDir: string, ext: string, createFolder = true): ReferenceFile {
  return newFile(dataDir, REFERENCES_DIR, ext, createFolder);
}

function newFile(dataDir: string, folder: string, ext: string, createFolder: boolean): ReferenceFile {
  const id = randomUUID();
  const file = path.join(folder, id.slice(0, 2), `${id}.${ext}`);
  const absolute = path.join(dataDir, file);
  // A stream check's worker creates the folder of what it writes, if it writes it.
  if (createFolder) fs.mkdirSync(path.dirname(absolute), { recursive: true });
  return { id, file, absolute };
}

/**
 * Removes reference files no row names that are older than the grace; returns how many. Capture
 * pictures have their own, more frequent sweep (sweepCaptureFiles).
 */
export async function sweepReferenceFiles(dataDir: string, db: Database, now = Date.now(), graceMs = UNLISTED_REFERENCE_GRACE_MS): Promise<number> {
  return sweepUnlisted(dataDir, REFERENCES_DIR, await listedReferenceFiles(db), now, graceMs);
}

/**
 * Capture pictures no row names (a camera's earlier ones) that are older than `graceMs`: every
 * check of a stream writes a new one, so they go sooner than references (CheckSchedule sweeps them
 * every few minutes). The grace covers a picture written and not yet recorded (the seconds between
 * a check's analysis and its outcome).
 */
export async function sweepCaptureFiles(dataDir: string, db: Database, graceMs: number, now = Date.now()): Promise<number> {
  return sweepUnlisted(dataDir, CAPTURES_DIR, await listedCaptureFiles(db), now, graceMs);
}

/** A stream check's picture: DATA_DIR/captures/<2 hex>/<uuid>.jpg (a camera row names its last). */
export function newCaptureFile(dataDir: string): ReferenceFile {
  return newFile(dataDir, CAPTURES_DIR, 'jpg', false);
}

async function sweepUnlisted(dataDir: string, folder: string, listed: Set<string>, now: number, graceMs: number): Promise<number> {
  const root = path.join(dataDir, folder);
  let removed = 0;
  for (const shard of await fs.promises.readdir(root).catch(() => [] as string[])) {
    const dir = path.join(root, shard);
    for (const name of await fs.promises.readdir(dir).catch(() => [] as string[])) {
      const file = path.join(folder, shard, name);
      if (listed.has(file)) continue;
      const stat = await fs.promises.stat(path.join(dir, name)).catch(() => null);
      if (!stat || now - stat.mtimeMs < graceMs) continue;
      await fs.promises.rm(path.join(dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}
