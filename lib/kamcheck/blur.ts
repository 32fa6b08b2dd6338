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
   * Median over frames of the median usable cell's contrast in the clip, less its noise (grey-level
   * std at the working size): below BLUR_MIN_SIGNAL the picture is too dark or too flat for its
   * focus to be judged.
   */
  signal: number;
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

