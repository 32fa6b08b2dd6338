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

/**
 * The reference at the working size; decoded from disk unless the same file was read recently.
 * Decoded whole: a JPEG decoded at half size by libjpeg's scaled IDCT would save 1.4 ms of CPU on
 * a 720p reference (2.7 instead of 4.1 ms with the workers' allocator settings) and move the
 * working picture, and so the causes, by a little (up to 29 points of one cause on one case of
 * the calibration set, no decision changed): not worth a change of the numerics.
 */
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

/** Forgets every cached reference (tests). */
export function clearReferenceCache(): void {
  cache.clear();
}

function toReference(image: cv.Mat): ReferencePicture {
  const width = image.cols;
  const height = image.rows;
  const size = workingSize(width, height);
  // the night evidence reads the clip's noise only
  const working = toWorking(image, size, false);
  if (working.bgr !== image) image.release();
  return { width, height, size, working };
}
