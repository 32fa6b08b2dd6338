// Lights at night: headlights sweeping through, a street lamp switching on. Where one shines, a cell
// brightens far more than the picture does, and the glow around the light adds contrast without fine
// detail, which the sharpness measure reads as a softer picture: a headlights case of the bench
// (1920x1080, noise sigma 13) scores 80 for blur with its lit cells in the measure. At night the
// focus is judged without them (measure.ts). And a light is a sign of the night in itself: in a
// picture darker than its reference, a light source still reaches near white where the reference
// was not, which no darkening of the camera's (a lower gain, a closed iris, a filter) can do.
import cv from '../video/opencv.js';
import { median } from '../stats.js';
import { CELL_COUNT } from './cells.js';

/**
 * How many times more than the picture's typical usable cell a cell must brighten (clip over
 * reference, mask.ts's low-passed cell means) to count as lit. On the calibration draw (seed 2),
 * headlights brighten their brightest cell 2.5-7.3 times more than the typical one, street lamps
 * 1.6-3.6. By day the brightest cell of a clip changes as much for other reasons (a median 1.6-1.8
 * over the day kinds, up to 5.3 with a colour cast, heavy compression or people: dark cells change
 * most), so at night such cells leave the focus measure too; the day has no lit cells, since
 * litCells runs only at night (measure.ts).
 */
export const LIT_FACTOR = 1.6;

/**
 * Per cell: whether any frame shows it lit (brightened LIT_FACTOR times more than the median usable
 * cell), from the cells' mean grey levels (mask.ts reads them for its own comparison).
 */
export function litCells(reference: Float32Array, frames: Float32Array[], usable: boolean[]): boolean[] {
  const lit = new Array<boolean>(CELL_COUNT).fill(false);
  for (const means of frames) {
    // +4 grey levels: a black cell of the reference does not make any light infinite
    const gains = Array.from(means, (v, i) => (v + 4) / (reference[i] + 4));
    const typical = median(gains.filter((_, i) => usable[i]));
    for (let i = 0; i < CELL_COUNT; i++) if (gains[i] > LIT_FACTOR * typical) lit[i] = true;
  }
  return lit;
}

/**
 * Grey level (at the working size) that a pixel of a darker clip reaches only where a light shines:
 * a darkening of a stop takes the reference's white to 128. In the median frame of the fixtures'
 * under-exposed and black clips and of the night kinds without lights, 0.9 stops or more darker
 * than their reference, no pixel reaches it (seeds 2, 7, 11, 13, 17, 19, 23).
 */
export const LIGHT_LEVEL = 200;

/**
 * The share of the view that shines as a light in the clip (median over the frames): its pixels
 * at LIGHT_LEVEL or above where the reference's are below it. Lamps, headlights and snow lit by
 * them make it; a camera's own darkening cannot.
 * @param reference the reference at the working size, grey CV_32F, aligned to the clip's view
 * @param frames the clip's frames at the working size, grey CV_8U
 * @param checked the pixels that count (a camera's ignored areas left out); all when absent
 */
export function lightsShining(reference: cv.Mat, frames: cv.Mat[], checked?: cv.Mat): number {
  const belowFloat = reference.threshold(LIGHT_LEVEL - 0.5, 255, cv.THRESH_BINARY_INV);
  const below = belowFloat.convertTo(cv.CV_8U);
  belowFloat.release();
  const darkInReference = checked ? below.bitwiseAnd(checked) : below;
  if (darkInReference !== below) below.release();
  try {
    const pixels = reference.rows * reference.cols;
    return median(
      frames.map((f) => {
        const bright = f.threshold(LIGHT_LEVEL - 1, 255, cv.THRESH_BINARY);
        const shining = bright.bitwiseAnd(darkInReference);
        const share = shining.countNonZero() / pixels;
        bright.release();
        shining.release();
        return share;
      }),
    );
  } finally {
    darkInReference.release();
  }
}
