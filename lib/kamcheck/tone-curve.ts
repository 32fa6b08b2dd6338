// A new tone curve or a veil? Both lower the contrast of a bright scene's cells alike: a gamma
// under 1 (a camera's curve that lifts the shadows) flattens the lit parts, and a film's glare
// flattens everything. They differ at the ends of the range. A tone curve keeps black at black and
// white at white; a veil adds light that is not the scene's, so its curve lifts black and does
// not pass through it. Measurement: the power curve through black and white (clip = 255 *
// (reference / 255) ^ exponent) fitted to the cells' mean grey levels, and how far the cells lie
// from it. Where they lie on it, the curve's slope at each cell says how much of the cell's
// contrast the curve alone leaves (veil.ts divides what the view kept by it); where they do not,
// it explains nothing.
import { median } from '../stats.js';
import { CELL_COUNT } from './cells.js';
import { CONTRAST_DARK_OFFSET, type MaskMeasurement } from './mask.js';
import { ramp } from './ramp.js';

/**
 * Reference cell mean grey levels between which a cell takes part in the fit: the log of a level
 * near black or white is all rounding, and a cell the clip brings to 0 or 255 says nothing of the
 * curve's shape.
 */
export const TONE_FIT_LEVELS = { low: 16, high: 240 };
/** Cells the fit needs. */
export const TONE_FIT_MIN_CELLS = 16;
/**
 * Median distance of the cells from the fitted curve (|log clip - exponent * log reference|,
 * grey levels over 255) up to which the curve explains in full, and from which it explains
 * nothing. On the five day draws (seeds 2, 7, 29, 31, 37) the gamma kind's clips under 1 lie
 * 0.002-0.021 from their curve (0.010 or less on every still scene; people walking and x264 make
 * the rest), and the curve's exponent comes within 0.09 of the gamma's. The films lie further:
 * spray mists 0.013-0.059, fogged windows 0.018-0.12, full smears 0.014-0.09 (a partial smear
 * leaves most cells where they were, on the curve of exponent 1, which explains nothing).
 * Explaining at any distance, the view-wide terms of 2 spray mists, 3 full smears and a fogged
 * window of seeds 2 and 7 (40 of each kind) fall below 50; with these bounds, none that did not.
 */
export const TONE_FIT_FULL = 0.01;
export const TONE_FIT_NONE = 0.02;

export interface ToneCurveFit {
  /** The exponent of the power curve through black and white fitted to the cell means (median of the cells' own). 1 when it cannot be fitted. */
  exponent: number;
  /** Median distance of the cells from it, in log grey level; Infinity when it cannot be fitted. */
  residual: number;
  /** 0..1: how far the curve explains the cells' contrast (TONE_FIT_FULL, TONE_FIT_NONE). */
  weight: number;
}

/** The power curve through black and white that best maps the reference's cell means to the clip's (median over the frames). */
export function fitToneCurve(mask: MaskMeasurement): ToneCurveFit {
  const clip = new Float32Array(CELL_COUNT);
  for (let i = 0; i < CELL_COUNT; i++) clip[i] = median(mask.frameBrightness.map((f) => f[i]));
  const cells: number[] = [];
  for (let i = 0; i < CELL_COUNT; i++) {
    const x = mask.referenceBrightness[i];
    if (mask.structured[i] && !mask.covered[i] && x >= TONE_FIT_LEVELS.low && x <= TONE_FIT_LEVELS.high && clip[i] > 1 && clip[i] < 254) cells.push(i);
  }
  if (cells.length < TONE_FIT_MIN_CELLS) return { exponent: 1, residual: Infinity, weight: 0 };
  const logX = (i: number) => Math.log(mask.referenceBrightness[i] / 255);
  const logY = (i: number) => Math.log(clip[i] / 255);
  const exponent = median(cells.map((i) => logY(i) / logX(i)));
  const residual = median(cells.map((i) => Math.abs(logY(i) - exponent * logX(i))));
  return { exponent, residual, weight: 1 - ramp(residual, TONE_FIT_FULL, TONE_FIT_NONE) };
}

/**
 * Per cell, the share of its contrast the fitted curve alone leaves it (at most 1), on mask.ts
 * contrastKept's terms: the larger of the curve's slope at the cell's mean and that slope relative
 * to the brightness. A gamma under 1 leaves a bright cell its exponent's share (0.6 of it at 0.6)
 * and a dark one all; 1 for cells outside the fitted levels and where the curve explains nothing.
 */
export function contrastLeft(fit: ToneCurveFit, referenceBrightness: Float32Array): Float32Array {
  const left = new Float32Array(CELL_COUNT).fill(1);
  if (fit.weight === 0) return left;
  const g = fit.exponent;
  for (let i = 0; i < CELL_COUNT; i++) {
    const x = referenceBrightness[i];
    if (x < TONE_FIT_LEVELS.low || x > TONE_FIT_LEVELS.high) continue;
    const y = 255 * Math.pow(x / 255, g);
    const slope = (g * y) / x;
    const kept = Math.min(1, Math.max(slope, (slope * (x + CONTRAST_DARK_OFFSET)) / (y + CONTRAST_DARK_OFFSET)));
    left[i] = 1 - fit.weight * (1 - kept);
  }
  return left;
}
