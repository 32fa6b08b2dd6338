// Faces in the dark, brought up towards the light the face models learned on. BlazeFace and
// face-api's gender net take pixel values as they are (tile-runtime.ts, face-net.ts), and their
// training photos are lit: a face at a third of the day's brightness is a low-contrast face to them
// and is found later, and its gender read less surely. A gain on the model's input (a tile, a crop)
// restores the contrast; it cannot remove the noise that the camera's own gain brought.
//
// Measured on the face-log night set (seed 3, `bench-facelog --set night`; the `dark` look as lifted
// here by `bench-facelog-night-detector.js --look dark`): full-frame detection on every fourth
// frame, truth faces found (IoU >= 0.3) by width, 30-40 / 40-55 / 55-80 / 80+ px:
// - `dark` videos (a third of the day's light, noise sigma 8-14): plain 72/86/93/98%; each tile
//   lifted as here 80/95/95/97% (82/96/97/97% without the cap on saturation, which test/40's lit
//   faces in padded tiles need); the whole frame lifted to a mean of 100 (at most 3x)
//   77/93/97/97%; a Gaussian blur (sigma 1) before that 77/89/92/96%: it takes the features with
//   the noise.
// - `low` and infrared videos: plain 94/99/100/100%, lifted without the cap 95/100/100/99%.
// - by day (the test set): plain 100/100/100/97%, lifted without the cap 100/100/100/100%; the
//   day bench set's accuracy with the cap is issue 27's, figure for figure (docs/benchmarks.md).
// The target is the model's zero (its input is (v - 127.5) / 127.5): a mid-grey tile is centred.
import cv from '../video/opencv.js';

/**
 * A face whose mean grey is under this is dark: the detector scores it lower, so the face log asks
 * less of its scores (run.ts, MIN_BEST_SCORES_DARK; track/backfill.ts, MIN_BACKFILL_SCORE_DARK).
 * By day no false group of tracks of the bench set has a face this dark with its thumbnail margin
 * (the darkest at grey 75).
 */
export const DARK_FACE_GREY = 64;

/** Whether a face's crop (with its thumbnail margin) is dark: DARK_FACE_GREY. */
export function isDarkFace(crop: cv.Mat): boolean {
  return meanGrey(crop) < DARK_FACE_GREY;
}

/** Mean grey that a dark input is brought up to. */
export const LIFT_TARGET_GREY = 127;
/** Most gain given: beyond it, the noise of a darker input is all that grows. */
export const MAX_LIFT = 4;
/** Below this gain an input is left as it is (a copy would cost more than it changes). */
const MIN_LIFT = 1.1;

/**
 * A lift stops where the brighter part of the input would saturate: its mean plus this many
 * standard deviations stays at or below 255. A lit face in a dark tile keeps its features.
 */
const BRIGHT_PART_SIGMAS = 2;

/** Mean grey (0..255) of a BGR or grey image. */
export function meanGrey(image: cv.Mat): number {
  const m = image.mean();
  return image.channels === 1 ? m.w : (m.w + m.x + m.y) / 3;
}

/**
 * The gain that brings a mean grey of `grey` up to LIFT_TARGET_GREY, at most MAX_LIFT and, with
 * `spread` (the grey's standard deviation), at most what keeps the brighter part below 255; 1 for
 * inputs light enough.
 */
export function liftGain(grey: number, spread = 0): number {
  const gain = Math.min(MAX_LIFT, LIFT_TARGET_GREY / Math.max(1, grey), 255 / Math.max(1, grey + BRIGHT_PART_SIGMAS * spread));
  return gain < MIN_LIFT ? 1 : gain;
}

/** `image` lifted by what its own mean and spread allow (liftGain). */
export function liftDark(image: cv.Mat): cv.Mat {
  const { mean, stddev } = image.meanStdDev();
  const channels = image.channels;
  const avg = (v: cv.Mat) => {
    const d = v.getDataAsArray() as number[][];
    return d.slice(0, channels).reduce((s, [x]) => s + x, 0) / channels;
  };
  return lift(image, liftGain(avg(mean), avg(stddev)));
}

/** `image` with its gain applied (saturating), or `image` itself when it needs none. */
export function lift(image: cv.Mat, gain: number): cv.Mat {
  return gain === 1 ? image : image.convertTo(image.type, gain, 0);
}
