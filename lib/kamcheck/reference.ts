// The reference picture of a check, at the working size, from a small cache per worker process.
// A stored camera reference is read by every check of that camera; the cache is keyed by the
// file's identity (path, inode, size, modification time), so a reference replaced by a rename is
// read again, and the file itself is never written here.
import fs from 'node:fs';
import cv from '../video/opencv.js';
import { readImage } from '../video/decode.js';
import { DecodeError } from '../video/errors.js';
import { parseImageHeader } from '../video/image-header.js';
import { toWorking, WORKING_WIDTH, workingSize, type WorkingPicture, type WorkingSize } from './cells.js';

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
 * `reduced: false` decodes a JPEG at full size, as any other picture (tests compare the two).
 */
export function loadReference(path: string, { reduced = true } = {}): ReferencePicture {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(path);
  } catch {
    throw new DecodeError('the image cannot be read (missing or unreadable file)');
  }
  const key = `${path}\0${stat.ino}\0${stat.size}\0${stat.mtimeMs}\0${reduced}`;
  const hit = cache.get(key);
  if (hit) {
    // most recently used last: Map keeps insertion order
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const picture = (reduced && readReduced(path)) || toReference(readImage(path), null);
  cache.set(key, picture);
  while (cache.size > REFERENCE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return picture;
}

/** Forgets every cached reference (tests). */
export function clearReferenceCache(): void {
  cache.clear();
}

/** Bytes read for the JPEG header: its SOF marker follows the EXIF and tables, well inside this. */
const HEADER_BYTES = 64 * 1024;

const REDUCED_COLOR: Record<number, number> = { 2: cv.IMREAD_REDUCED_COLOR_2, 4: cv.IMREAD_REDUCED_COLOR_4, 8: cv.IMREAD_REDUCED_COLOR_8 };

/**
 * A large JPEG decoded at 1/2, 1/4 or 1/8 of its size by libjpeg's scaled inverse DCT, which
 * skips most of the decoding work (a 1280x720 reference: 2-6 ms instead of 17 ms, and toWorking
 * then has no halving to do). The factor keeps the decoded picture at least twice the working
 * width, as toWorking's own halving does, so the working picture averages the same area of the
 * view. Null for anything else (PNG, small JPEGs): the caller decodes it whole.
 */
function readReduced(path: string): ReferencePicture | null {
  const head = Buffer.alloc(HEADER_BYTES);
  const fd = fs.openSync(path, 'r');
  let bytes: number;
  try {
    bytes = fs.readSync(fd, head, 0, HEADER_BYTES, 0);
  } finally {
    fs.closeSync(fd);
  }
  const header = parseImageHeader(head.subarray(0, bytes));
  if (header?.format !== 'jpeg') return null;
  const factor = [8, 4, 2].find((f) => header.width / f >= 2 * WORKING_WIDTH);
  if (!factor) return null;
  let image: cv.Mat;
  try {
    image = cv.imread(path, REDUCED_COLOR[factor]);
  } catch {
    return null;
  }
  // libjpeg rounds a scaled size up
  if (image.empty || image.cols !== Math.ceil(header.width / factor) || image.rows !== Math.ceil(header.height / factor)) return null;
  return toReference(image, header);
}

/** `stored`: the picture's size as stored, when `image` was decoded smaller. */
function toReference(image: cv.Mat, stored: { width: number; height: number } | null): ReferencePicture {
  const width = stored?.width ?? image.cols;
  const height = stored?.height ?? image.rows;
  const size = workingSize(width, height);
  const working = toWorking(image, size);
  if (working.bgr !== image) image.release();
  return { width, height, size, working };
}
