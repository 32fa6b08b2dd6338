// Reference pictures on disk: DATA_DIR/references/<2 hex>/<uuid>.<ext> (lib/data-files.ts). A row
// in camera_references says which files are current. A file whose row is gone (pruned past
// REFERENCES_PER_SLOT, or its camera deleted) is removed by the cameras' retention once no queued
// check can still be reading it.
import path from 'node:path';
import type { Duty } from '../duty-runner.js';
import { newDataFile, sweepUnlisted, type DataFile } from '../data-files.js';
import type { ReferenceRecord } from './camera-records.js';
import type { CameraStore } from './camera-store.js';
import { makeMissingThumbnails, sweepThumbnails, THUMBNAILS_INTERVAL_MS } from './thumbnails.js';
import type { SourceStore } from '../sources/source-store.js';

export const REFERENCES_DIR = 'references';

/**
 * How long a file without a row is kept: a check chose it at its upload and may still be queued
 * or running (tamper checks run within seconds; a full queue of 500 waits minutes).
 */
export const UNLISTED_REFERENCE_GRACE_MS = 60 * 60 * 1000;
export const REFERENCE_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export type ReferenceFile = DataFile;

/** A new reference's place (its folder created); `ext` is `jpg` or `png`. */
export function newReferenceFile(dataDir: string, ext: string): ReferenceFile {
  return newDataFile(dataDir, REFERENCES_DIR, ext, true);
}

/** Removes reference files no row names that are older than the grace; returns how many. */
export async function sweepReferenceFiles(dataDir: string, cameras: CameraStore, now = Date.now(), graceMs = UNLISTED_REFERENCE_GRACE_MS): Promise<number> {
  return sweepUnlisted(dataDir, REFERENCES_DIR, await cameras.listedReferenceFiles(), now, graceMs);
}

/** The cameras' retention: `cameras.reference-files`, at start and hourly (and the thumbnails of pictures that are gone). */
export function referenceFilesDuty(dataDir: string, cameras: CameraStore): Duty {
  return {
    name: 'cameras.reference-files',
    intervalMs: REFERENCE_SWEEP_INTERVAL_MS,
    atStart: true,
    run: async () => ({ removed: await sweepReferenceFiles(dataDir, cameras), thumbnails: await sweepThumbnails(dataDir) }),
  };
}

/** `cameras.thumbnails`: the missing thumbnails of the pictures the camera list shows, at start and every 5 minutes. */
export function thumbnailsDuty(dataDir: string, cameras: CameraStore, sources: SourceStore): Duty {
  return {
    name: 'cameras.thumbnails',
    intervalMs: THUMBNAILS_INTERVAL_MS,
    atStart: true,
    run: async () => {
      const [references, all] = await Promise.all([cameras.references(null), sources.all()]);
      // newest first within each camera's slot (CameraStore.references)
      const seen = new Set<string>();
      const newest = references.filter((r) => !seen.has(`${r.camera}\n${r.slot}`) && seen.add(`${r.camera}\n${r.slot}`));
      const pictures = [...newest.map((r) => r.file), ...[...all.values()].flatMap((s) => (s.picture ? [s.picture.file] : []))];
      return { made: await makeMissingThumbnails(dataDir, pictures) };
    },
  };
}

export function referencePath(dataDir: string, ref: Pick<ReferenceRecord, 'file'>): string {
  return path.join(dataDir, ref.file);
}
