// The pictures of stream captures: DATA_DIR/captures/<2 hex>/<uuid>.jpg (lib/data-files.ts); a
// source's row names its last. Every check of a stream writes a new one, so the earlier ones go
// often (the sources' retention, every few minutes), once older than a grace that covers a picture
// written and not yet recorded (the seconds between a check's analysis and its outcome).
import type { Duty } from '../duty-runner.js';
import { newDataFile, sweepUnlisted, type DataFile } from '../data-files.js';
import type { SourceStore } from './source-store.js';

export const CAPTURES_DIR = 'captures';
export const CAPTURE_SWEEP_INTERVAL_MS = 5 * 60 * 1000;
export const CAPTURE_GRACE_MS = 10 * 60 * 1000;

/** A stream check's picture; its worker creates the folder when it writes it. */
export function newCaptureFile(dataDir: string): DataFile {
  return newDataFile(dataDir, CAPTURES_DIR, 'jpg', false);
}

/** Removes capture pictures no row names that are older than `graceMs`; returns how many. */
export async function sweepCaptureFiles(dataDir: string, sources: SourceStore, graceMs = CAPTURE_GRACE_MS, now = Date.now()): Promise<number> {
  return sweepUnlisted(dataDir, CAPTURES_DIR, await sources.listedCaptureFiles(), now, graceMs);
}

/** The sources' retention: `sources.capture-files`, every CAPTURE_SWEEP_INTERVAL_MS. */
export function captureFilesDuty(dataDir: string, sources: SourceStore): Duty {
  return {
    name: 'sources.capture-files',
    intervalMs: CAPTURE_SWEEP_INTERVAL_MS,
    run: async () => ({ removed: await sweepCaptureFiles(dataDir, sources) }),
  };
}
