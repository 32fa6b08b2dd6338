// Refreshing a camera's reference from a clip that showed no tampering: the scene as the clip shows
// it without its passers-by (renewalPicture) becomes the new reference, so that slow changes of the
// scene (season, furniture moved, a new poster) stop looking like tampering. A clip's quietest
// frame (the fewest passers-by) is what POST /kamcheck_get_reference answers, a frame of the clip.
import fs from 'node:fs';
import path from 'node:path';
import cv from '../video/opencv.js';
import { THUMBNAIL_WIDTH, thumbnailBeside } from '../data-files.js';
import { perPixelMedian } from './pixel-median.js';

/** JPEG quality of a refreshed reference: 95 keeps the fine texture the blur measurement compares. */
export const REFRESH_JPEG_QUALITY = 95;

/**
 * Index of the picture closest to the per-pixel median of all of them: a person or vehicle that
 * passes through covers any one pixel in only a few frames, so the median is the empty scene, and
 * the frame nearest to it shows the fewest of them. Grey pictures of one size (the working size:
 * 320 px wide, about 1 ms for 9 pictures); the first of equals wins.
 */
export function quietestFrame(gray: cv.Mat[]): number {
  if (gray.length === 0) throw new Error('quietestFrame needs at least one picture');
  if (gray.length <= 2) return 0; // no majority to tell the scene from a passer-by
  const median = perPixelMedian(gray);
  let best = 0;
  let bestDistance = Infinity;
  gray.forEach((g, i) => {
    const distance = g.absdiff(median).sum() as number;
    if (distance < bestDistance) {
      best = i;
      bestDistance = distance;
    }
  });
  return best;
}

/**
 * The picture a camera's reference is renewed or learned from: the per-pixel median of the clip's
 * spread frames (full size), the scene without what passes through it. The quietest single frame
 * keeps whatever it froze, rain streaks, snowflakes, a headlight's glare, the passer-by who was in
 * every frame, and checks against such a reference raise false alarms: benign clips checked
 * against a reference from their own first half, 9 of 340 alarms with its quietest frame, none
 * with the median (docs/benchmarks.md, renewed references). 9 frames of 1280x720 take 25 ms.
 * With 1 or 2 frames (no majority), the first; the caller frees a picture that is not one of them.
 */
export function renewalPicture(frames: cv.Mat[]): cv.Mat {
  if (frames.length === 0) throw new Error('renewalPicture needs at least one frame');
  return frames.length <= 2 ? frames[0] : perPixelMedian(frames);
}

/**
 * Writes `frame` as the JPEG at `file`: into `file.tmp` first, then renamed over it, so that a
 * reader (another check of the same camera) sees the old picture or the new one, never half of one.
 */
export function writeReference(file: string, frame: cv.Mat, quality = REFRESH_JPEG_QUALITY): void {
  writeJpeg(file, frame, quality);
}

/**
 * writeReference for a camera's picture (a reference or a capture, a data file of
 * `<DATA_DIR>/<folder>/<2 hex>/<name>`), with the small copy the camera list shows: made here from
 * the frame in memory, it adds 1.4 ms at 640x480, 1.9 at 1280x720, 3.3 at 1920x1080 (median of 30).
 */
export function writeCameraPicture(file: string, frame: cv.Mat, quality = REFRESH_JPEG_QUALITY): void {
  writeJpeg(file, frame, quality);
  const small = frame.cols > THUMBNAIL_WIDTH ? frame.resize(Math.round((frame.rows * THUMBNAIL_WIDTH) / frame.cols / 2) * 2, THUMBNAIL_WIDTH, 0, 0, cv.INTER_AREA) : frame;
  writeJpeg(thumbnailBeside(file), small, THUMBNAIL_JPEG_QUALITY);
}

/** JPEG quality of thumbnails: for a card's small picture. */
const THUMBNAIL_JPEG_QUALITY = 80;

/** Written aside and renamed: a reader sees a whole file or none. */
function writeJpeg(file: string, frame: cv.Mat, quality: number): void {
  const tmp = `${file}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, cv.imencode('.jpg', frame, [cv.IMWRITE_JPEG_QUALITY, quality]));
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
