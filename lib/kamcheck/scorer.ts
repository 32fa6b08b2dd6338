// Turns each cause's measurement into a 0..100 score and the scores into one tampering probability.
// Each score is a logistic curve centred on a threshold set between the benign and the tamper
// distributions of that measurement on the generated bench fixtures (see the constants).
import { TamperMeasurements } from './measure.js';

export interface TamperCauses {
  blur: number;
  moved: number;
  masked: number;
  exposure: number;
  frozen: number;
  black: number;
}

/** A logistic from measurement to 0..100: 50 at `centre`, 27 / 73 half a `width` either side, 12 / 88 a whole `width`. */
export interface Calibration {
  centre: number;
  width: number;
}

// Centres sit between the largest benign and the smallest tamper value of each measurement on the
// bench set (node build/scripts/bench-kamcheck-accuracy.js --measures, seed 2: 360 cases, 480 with
// the semi-transparent kinds for the masked cause); the numbers quoted are those extremes.

/** -log2 sharpness ratio: benign up to 2.73 (x264 CRF 49-50 at 320x240), defocus from 3.70 (sigma 0.006 x width). */
export const BLUR_CALIBRATION: Calibration = { centre: 3.2, width: 0.4 };
/** Corner displacement / width: benign up to 0.005, moved from 0.051 (a 3 degree turn alone is ~0.03). */
export const MOVED_CALIBRATION: Calibration = { centre: 0.018, width: 0.006 };
/** Largest covered, veiled or softened region / cells in view: benign up to 0.073 (shadows), partial smears from 0.125, masks from 0.146 (30% of the view). */
export const MASKED_CALIBRATION: Calibration = { centre: 0.1, width: 0.03 };
/**
 * View contrast lost (veil.ts viewContrastLost: what the view lost in fine detail, within cells and
 * between cells, summed), for a thin veil over all of the view that no region's loss reveals (paint
 * mist, light grease over everything). Calibration set: benign up to 0.460 (haze of 0.16-0.17 over
 * aero3.jpg; gamma 0.327, heavy compression 0.208, every other benign kind 0.144 or less), spray
 * mists 0.17-0.77 (median 0.55), full smears from 0.36. 0.53 keeps the haze at 9; the thinnest mists
 * stay below, as thin as the haze on this measurement.
 */
export const VIEW_VEIL_CALIBRATION: Calibration = { centre: 0.53, width: 0.06 };
/**
 * Tinted contrast lost (veil.ts tintedContrastLost: the view's contrast lost, weighed by how far its
 * colours moved), for a thin mist of coloured paint. Calibration set: benign up to 0.215 (haze),
 * gamma 0.209, a colour cast 0.132, every other benign kind 0.04 or less; spray mists 0.09-0.76
 * (median 0.34).
 */
export const TINTED_VEIL_CALIBRATION: Calibration = { centre: 0.28, width: 0.04 };
/** Exposure units (below): benign up to 0.56 (shadows, gamma 0.53), over/under-exposure from 0.82. */
export const EXPOSURE_CALIBRATION: Calibration = { centre: 0.69, width: 0.15 };
/** Share of still frame pairs: 0 on every benign case (all have motion), 1 on every frozen one. */
export const FROZEN_CALIBRATION: Calibration = { centre: 0.5, width: 0.08 };
/** Brightest 1% grey level (lower = more black): black up to 10, under-exposed from 31. */
export const BLACK_CALIBRATION: Calibration = { centre: 20, width: 6 };

/** Stops of brightness change that count as one exposure unit: 1.3 stops (x2.5 or x0.4). */
export const EXPOSURE_STOPS_UNIT = 1.3;
/** Share of newly saturated pixels that counts as one unit. */
export const EXPOSURE_SATURATED_UNIT = 0.3;
/** Share of newly crushed-black pixels that counts as one unit. */
export const EXPOSURE_CRUSHED_UNIT = 0.4;

export function logistic(value: number, c: Calibration): number {
  return 100 / (1 + Math.exp(-(value - c.centre) / (c.width / 2)));
}

/** Cause measurements on a common "higher = more likely tampered" axis, before calibration. */
export function causeMeasures(m: TamperMeasurements): TamperCauses {
  return {
    blur: -Math.log2(Math.max(m.blur.sharpnessRatio, 1e-3)),
    moved: m.shift.displacement,
    // covered, veiled and softened cells together (veil.ts): a smear is one piece with what it
    // covers fully; or the view's overall contrast loss, plain or tinted, put on the same axis
    // (equal scores at equal values)
    masked: Math.max(
      m.veil.obscuredFraction,
      onMaskedAxis(m.veil.viewContrastLost, VIEW_VEIL_CALIBRATION),
      onMaskedAxis(m.veil.tintedContrastLost, TINTED_VEIL_CALIBRATION),
    ),
    exposure: Math.max(
      Math.abs(m.exposure.stops) / EXPOSURE_STOPS_UNIT,
      m.exposure.newlySaturated / EXPOSURE_SATURATED_UNIT,
      m.exposure.newlyCrushed / EXPOSURE_CRUSHED_UNIT,
    ),
    frozen: m.freeze.stillPairs,
    black: -m.black.brightest,
  };
}

/** A measurement calibrated as `c`, moved onto the masked cause's axis so that it scores the same there. */
function onMaskedAxis(value: number, c: Calibration): number {
  return MASKED_CALIBRATION.centre + ((value - c.centre) * MASKED_CALIBRATION.width) / c.width;
}

export function scoreCauses(m: TamperMeasurements): TamperCauses {
  const v = causeMeasures(m);
  return {
    blur: Math.round(logistic(v.blur, BLUR_CALIBRATION)),
    moved: Math.round(logistic(v.moved, MOVED_CALIBRATION)),
    masked: Math.round(logistic(v.masked, MASKED_CALIBRATION)),
    exposure: Math.round(logistic(v.exposure, EXPOSURE_CALIBRATION)),
    frozen: m.freeze.stillPairs > 0 ? Math.round(logistic(v.frozen, FROZEN_CALIBRATION)) : 0,
    black: Math.round(logistic(v.black, { centre: -BLACK_CALIBRATION.centre, width: BLACK_CALIBRATION.width })),
  };
}

/** The strongest cause decides: causes are alternatives, not independent evidence to add up. */
export function combine(causes: TamperCauses): number {
  return Math.max(causes.blur, causes.moved, causes.masked, causes.exposure, causes.frozen, causes.black);
}
