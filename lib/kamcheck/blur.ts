// Cause "blur": the view is out of focus (defocused, fogged, smeared lens). Measurement: Laplacian
// energy relative to contrast (variance), i.e. how much of the picture's structure is fine detail,
// summed over the cells that are structured and not covered (a mask is the mask cause's business),
// clip over reference, median over frames. Energy over variance is gain invariant, so a darker or
// brighter scene keeps its sharpness. Summing before dividing weights the cells by their contrast:
// on the test fixtures this separated defocus (-log2 ratio 5.8-6.4) from x264 at CRF 49 on a
// 320x240 clip (3.9) better than a median of per-cell ratios (4.4-4.8 vs 3.6), because compression
// keeps the strong edges that dominate the sums while defocus softens them too.
import cv, { readAndFree } from '../video/opencv.js';
import { median } from '../stats.js';
import { asIs, carriedCellMeans, CELL_COUNT, cellMoments } from './cells.js';
import { alignReference, type CameraShift } from './shift.js';

/** Grey-level variance added per cell so that nearly flat cells (noise only) do not dominate. */
const VARIANCE_FLOOR = 4;

export interface BlurMeasurement {
  /** Clip sharpness / reference sharpness over the usable cells: 1 unchanged, < 1 softer. */
  sharpnessRatio: number;
  cells: number;
  /** -log2 of the sharpness ratio at half the working size; measured only at night (measure.ts), else absent. */
  halfScaleLost?: number;
  /**
   * How much more of its small detail than of its strong edges the clip lost (smallDetailLost):
   * the mark of an encoder's quantisation. Read only by day on a clip that lost sharpness enough
   * to matter (measure.ts), else absent.
   */
  smallDetailLost?: number;
  /**
   * Median over frames of the median usable cell's contrast in the clip, less its noise (grey-level
   * std at the working size): below BLUR_MIN_SIGNAL the picture is too dark or too flat for its
   * focus to be judged.
   */
  signal: number;
}

/** -log2 sharpness ratio from which a day clip's smallDetailLost is read: below it the blur cause scores 0 and there is nothing to excuse (0.5 ms a read, on 3 frames). */
export const SMALL_DETAIL_READ_FROM = 1.5;

/** -log2 of a sharpness ratio (a ratio of 0 read as 1e-3): the sharpness a clip lost, on the blur cause's axis. */
export function sharpnessLost(ratio: number): number {
  return -Math.log2(Math.max(ratio, 1e-3));
}

/** Contrast (grey-level std at the working size, noise removed) that the median usable cell needs for the focus to be judged. */
export const BLUR_MIN_SIGNAL = 2;

/**
 * Per-cell Laplacian energy and variance of `m`, taken in its own pixels and carried into the
 * frames' geometry by `carry` (a reference when the camera shifted). Resampling the picture itself
 * would smooth it (a bilinear warp at half a pixel halves a fine line's contrast) and take the very
 * detail a defocus is told by; the means of the energy and moment maps survive resampling.
 */
function cellEnergyAndVariance(m: cv.Mat, carry: (map: cv.Mat) => cv.Mat = asIs): { energy: Float32Array; variance: Float32Array } {
  const energy = readAndFree(m.laplacian(cv.CV_32F, 1), (lap) => readAndFree(lap.hMul(lap), (e) => carriedCellMeans(e, carry)));
  return { energy, variance: cellMoments(m, carry).variance };
}

/** Laplacian (3x3, ksize 1) energy of white noise of variance 1: the sum of the squared kernel weights. */
const LAPLACIAN_NOISE_GAIN = 20;

/**
 * Energy over variance of the usable cells, less what sensor noise of sigma `noise` adds to each:
 * the noise of high gain at night is fine detail to the Laplacian and would make a defocused view
 * look sharp.
 */
function sharpness(m: { energy: Float32Array; variance: Float32Array }, usable: boolean[], noise: number): number {
  const n2 = noise * noise;
  const floor = LAPLACIAN_NOISE_GAIN * n2;
  let e = 0;
  let v = 0;
  for (let i = 0; i < CELL_COUNT; i++) {
    if (!usable[i]) continue;
    e += Math.max(0, m.energy[i] - floor);
    v += Math.max(0, m.variance[i] - n2) + VARIANCE_FLOOR;
  }
  return v > 0 ? e / v : 0;
}

/**
 * @param reference the reference in its own geometry (not resampled), grey CV_32F
 * @param shift the camera's shift at this picture size (shift.ts): the reference's maps are carried
 *   into the frames' geometry by it
 * @param noise sensor noise sigma at the working size (noise.ts) of the reference and of each frame
 */
export function measureBlur(
  reference: cv.Mat, shift: CameraShift, frames: cv.Mat[], usable: boolean[], noise?: { reference: number; frames: number[] },
): BlurMeasurement {
  const cells = usable.filter(Boolean).length;
  if (cells === 0) return { sharpnessRatio: 1, cells, signal: 0 };
  const ref = sharpness(cellEnergyAndVariance(reference, (map) => alignReference(map, shift)), usable, noise?.reference ?? 0);
  const signals: number[] = [];
  const ratios = frames.map((f, k) => {
    const m = cellEnergyAndVariance(f);
    const n2 = (noise?.frames[k] ?? 0) ** 2;
    signals.push(median(usableValues(m.variance, usable).map((v) => Math.sqrt(Math.max(0, v - n2)))));
    return sharpness(m, usable, noise?.frames[k] ?? 0) / Math.max(ref, 1e-6);
  });
  return { sharpnessRatio: median(ratios), cells, signal: median(signals) };
}

function usableValues(values: Float32Array, usable: boolean[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < CELL_COUNT; i++) if (usable[i]) out.push(values[i]);
  return out;
}

/**
 * log2 of the clip's L4 norm of the Laplacian over the reference's, less log2 of their L1 norms,
 * over the usable cells (median over `frames`): how much more of its small Laplacian responses than
 * of its large ones the clip lost. An encoder's quantisation takes small responses (texture, noise)
 * whole and keeps strong edges, which the L4 norm is made of (scorer.ts COMPRESSED_FROM has the
 * bench's values). A defocus is linear and takes a strong edge's peak more than its sum (the peak
 * falls with sigma squared, the response summed across the edge with sigma). The noise of high
 * gain is small detail too, so a night clip whose encoder took it would read as compressed: it is
 * read by day only (measure.ts).
 */
export function smallDetailLost(reference: cv.Mat, shift: CameraShift, frames: cv.Mat[], usable: boolean[]): number {
  const norms = (m: cv.Mat, carry: (map: cv.Mat) => cv.Mat) =>
    readAndFree(m.laplacian(cv.CV_32F, 1), (lap) => {
      const l1 = readAndFree(lap.abs(), (a) => carriedCellMeans(a, carry));
      const l4 = readAndFree(lap.hMul(lap), (e) => readAndFree(e.hMul(e), (e2) => carriedCellMeans(e2, carry)));
      let sum1 = 0;
      let sum4 = 0;
      for (let i = 0; i < CELL_COUNT; i++) {
        if (!usable[i]) continue;
        sum1 += l1[i];
        sum4 += l4[i];
      }
      return { l1: sum1, l4: Math.sqrt(Math.sqrt(sum4)) };
    });
  const ref = norms(reference, (map) => alignReference(map, shift));
  return median(
    frames.map((f) => {
      const n = norms(f, asIs);
      return Math.log2(Math.max(n.l4, 1e-6) / Math.max(ref.l4, 1e-6)) - Math.log2(Math.max(n.l1, 1e-6) / Math.max(ref.l1, 1e-6));
    }),
  );
}
