// The reference picture of a check, at the working size, from a small cache per worker process.
// A stored camera reference is read by every check of that camera; the cache is keyed by the
// file's identity (path, inode, size, modification time), so a reference replaced by a rename is
// read again, and the file itself is never written here.
import fs from 'node:fs';
import type cv from '../video/opencv.js';
import { readImage } from '../video/decode.js';
import { DecodeError } from '../video/errors.js';
import { toWorking, workingSize, type WorkingPicture, type WorkingSize } from './cells.js';

export interface ReferencePicture {
  /** Size of the picture as stored (the clip must match it). */
  width: number;
  height: number;
  size: WorkingSize;
  working: WorkingPicture;
}

/**
 * 64 references: 15 MB of working pictures at 16:9 (230 KB each). A fleet checks each camera every
 * few minutes, so a worker sees a camera again long after 64 others: the cache serves a camera
 * checked several times in a row (a retry, an alarm being confirmed), not the fleet's steady state.
 */
export const REFERENCE_CACHE_ENTRIES = 64;

const cache = new Map<string, ReferencePicture>();

/** The reference at the working size; decoded from disk unless the same file was read recently. */
export function loadReference(path: string): ReferencePicture {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(path);
  } catch {
    throw new DecodeError('the image cannot be read (missing or unreadable file)');
  }
  const key = `${path}\0${stat.ino}\0${stat.size}\0${stat.mtimeMs}`;
  const hit = cache.get(key);
  if (hit) {
    // most recently used last: Map keeps insertion order
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const picture = toReference(readImage(path));
  cache.set(key, picture);
  while (cache.size > REFERENCE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return picture;
}

function toReference(image: cv.Mat): ReferencePicture {
  const size = workingSize(image.cols, image.rows);
  const working = toWorking(image, size);
  const picture = { width: image.cols, height: image.rows, size, working };
  if (working.bgr !== image) image.release();
  return picture;
}

/** Forgets every cached reference (tests). */
export function clearReferenceCache(): void {
  cache.clear();
}
