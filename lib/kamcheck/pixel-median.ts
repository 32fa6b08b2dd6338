// The per-pixel median of a clip's frames: the scene without what passes through it (people,
// vehicles, rain, snow), for a renewed reference (refresh.ts) and for the camera's shift (shift.ts).
import cv from '../video/opencv.js';

/**
 * Per-pixel median (the lower middle for an even count) of pictures of one size and type, by
 * native min/max on whole pictures, no per-pixel JavaScript: 9 pictures (a clip's spread frames)
 * by the 19 exchanges of a median network (Paeth's, as in Devillard's opt_med9), other counts by
 * an odd-even transposition sort. Frees the pictures it makes on the way; the median is a new
 * picture unless there is one picture.
 */
export function perPixelMedian(pictures: cv.Mat[]): cv.Mat {
  const p = pictures.slice();
  const made = new Set<cv.Mat>();
  const exchange = (a: number, b: number) => {
    const low = cv.min(p[a], p[b], new cv.Mat());
    const high = cv.max(p[a], p[b], new cv.Mat());
    for (const old of [p[a], p[b]]) if (made.delete(old)) old.release();
    p[a] = low;
    p[b] = high;
    made.add(low).add(high);
  };
  let middle = (p.length - 1) >> 1;
  if (p.length === 9) {
    for (const [a, b] of MEDIAN_OF_9) exchange(a, b);
    middle = 4;
  } else {
    for (let round = 0; round < p.length; round++) for (let i = round % 2; i + 1 < p.length; i += 2) exchange(i, i + 1);
  }
  for (const m of made) if (m !== p[middle]) m.release();
  return p[middle];
}

/** The exchanges that leave the median of 9 at index 4. */
const MEDIAN_OF_9: [number, number][] = [
  [1, 2], [4, 5], [7, 8], [0, 1], [3, 4], [6, 7], [1, 2], [4, 5], [7, 8],
  [0, 3], [5, 8], [4, 7], [3, 6], [1, 4], [2, 5], [4, 7], [4, 2], [6, 4], [4, 2],
];
