// Cause "masked": something covers part or all of the view (paint, a sticker, a sheet, a hand),
// flat or patterned. Measurement: the share of the view's cells that are covered, where a cell is
// covered in a frame when
//  - it had structure and that structure no longer correlates with the reference (normalised
//    cross-correlation, which ignores gain and offset, so light changes do not count), or
//  - it had some texture and became flat while its brightness departed from the frame's overall
//    brightness change (a flat sticker; heavy compression also flattens weak texture, but keeps
//    the brightness, and a darker scene darkens every cell alike),
//  - it had no texture and its brightness departed strongly from the frame's overall change, or
//    its colour did (a sticker over a plain wall or the sky: a teal sheet over blue sky can have
//    the sky's brightness, not its colour; a shadow changes the brightness, not the colour),
// and covered overall when covered in most frames (passers-by cross a cell, a mask stays). The
// measurement is the largest 8-connected region of covered cells: a mask is one piece, passers-by
// and shadow edges are scattered cells. Both pictures are low-passed first so that sensor noise
// and defocus leave real structure correlated.
import cv, { readAndFree } from '../video/opencv.js';
import { median } from '../stats.js';
import { CELL_COUNT, type CellColours, cellMeans, cellMoments, GRID_COLS, GRID_ROWS, spread, WorkingPicture } from './cells.js';
import { cellSaturation } from './night.js';

/** 1.5 px at 320: low-pass before comparing; with it the 'noise' bench cases (sigma 6-12) cover at most 0.063 of the view. */
export const MASK_LOWPASS_SIGMA = 1.5;
/** Grey-level std (after low-pass) below which a reference cell has no texture at all: it cannot show a mask. */
export const CELL_MIN_TEXTURE = 1.5;
/** Grey-level std above which a reference cell's structure is reliable enough to correlate. */
export const CELL_STRUCTURED = 5;
/** Below this NCC a structured cell lost its structure; with it no benign bench case covers more than 0.068 of the view. */
export const CELL_COVERED_NCC = 0.35;
/** A cell became flat when its contrast fell below this share of the reference's (a gain of 0.6 keeps 0.6). */
export const CELL_FLATTENED_RATIO = 0.25;
/** log brightness departure of a cell from the frame's overall change that a flattened cell needs (x1.35). */
export const CELL_BRIGHTNESS_DEPARTURE = 0.3;
/** log brightness departure that an untextured cell needs (x1.8: more than the deepest soft shadow, x0.4..0.7, on a plain wall). */
export const PLAIN_CELL_DEPARTURE = 0.6;
/**
 * Chromaticity departure (largest channel share change beyond the frame's overall colour change)
 * that marks a cell covered. Worked out on the sky of test case home.jpg (BGR 170,102,23): gamma
 * 1.6 moves its blue share by ~0.09; the teal sheet over it (BGR 101,99,53) by ~0.17. No benign
 * bench case reached a covered region above 0.068 of the view with it.
 */
export const CELL_COLOUR_DEPARTURE = 0.13;
/**
 * Saturation (night.ts cellSaturation) that 9 in 10 cells of a monochrome frame stay under: an infrared
 * camera sends grey, B = G = R within the rounding of its chroma. In such a frame every cell's
 * colour change is only its reference colour gone, so no cell can depart from the others by its
 * colour (an infrared clip of the bench had a blue sky's cells covered that way: masked 91).
 */
export const MONOCHROME_SATURATION = 0.03;

/**
 * Mean grey level above which a cell that got brighter has its contrast compressed by the camera's
 * highlight roll-off (the fixtures' gain knee is 190): on the bench a gain of 1.47 over a white
 * facade lost 0.4-0.6 of the contrast of 30 cells that way.
 */
export const HIGHLIGHT_LEVEL = 180;
/** Grey-level std between a neighbourhood's cell means below which it has no coarse contrast to lose. */
export const COARSE_MIN_STD = 3;
/** Grey levels added to a cell's mean in its relative contrast: sensor black is not quite 0, and dark cells' ratios are noise. */
export const CONTRAST_DARK_OFFSET = 10;
/**
 * The fine-detail band is the low-passed picture less the picture blurred at this sigma (px at
 * 320): detail of 2-6 px, which a film's scatter takes (its defocus is 1-10 px at the working size)
 * and sensor noise, already low-passed, hardly reaches. It is computed at half the working size,
 * which holds that band and costs a quarter (each float operation on a 320 px picture costs ~1 ms
 * here). Before softened cells needed groups of 4, sigma 4 made gamma's largest region 0.089 of the
 * view and 3 made it 0.078.
 */
export const DETAIL_BAND_SIGMA = 3;
/** Frames (spread over the clip's) whose fine detail is measured: a median of 3 already ignores a passer-by. */
export const DETAIL_FRAMES = 3;
/** Grey-level RMS of a reference cell's fine-detail band below which it has too little fine detail to lose. */
export const DETAIL_MIN_RMS = 2;

export interface MaskMeasurement {
  /** Per cell, the low-passed reference's mean grey level. */
  referenceBrightness: Float32Array;
  /** Per frame, per cell, the low-passed frame's mean grey level (lights.ts reads both). */
  frameBrightness: Float32Array[];
  /** Share of the cells in view in the largest connected covered region, 0..1. */
  coveredFraction: number;
  /** Share of the cells in view that are covered, connected or not. */
  coveredAnywhere: number;
  /** Per cell: true when covered in most frames. */
  covered: boolean[];
  /** Per cell: textured in the reference and in view. */
  textured: boolean[];
  /** Per cell: enough structure in the reference for a sharpness comparison. */
  structured: boolean[];
  /**
   * Per structured cell, median over frames: how much of its contrast (grey-level std after the
   * low-pass) the cell kept, clip over reference, as the larger of the absolute ratio and the ratio
   * relative to the cell's brightness (std over mean + CONTRAST_DARK_OFFSET). A change of gain
   * lowers the first and keeps the second; a gamma or a brighter exposure that lifts the shadows
   * lowers the second in bright cells and keeps the first; only a veil or smear (or defocus, or a
   * cover) lowers both. NaN for cells without structure. The veil measurement (veil.ts) reads it.
   */
  contrastKept: Float32Array;
  /**
   * Per structured cell, median over frames: the same ratio one scale up, between the means of the
   * cell and its 8 neighbours. A veil flattens that too; heavy compression smooths the texture
   * inside cells but keeps their brightness, so it keeps this. NaN where the reference's
   * neighbourhood has no contrast between cells (COARSE_MIN_STD).
   */
  coarseKept: Float32Array;
  /**
   * Per structured cell, median over frames: how much of its fine detail (RMS of the 2-6 px band,
   * DETAIL_BAND_SIGMA) the cell kept, absolute or relative to brightness as contrastKept. A film
   * scatters the light that passes through it, so it takes fine detail first: a light smear keeps
   * 0.7-0.8 of a cell's contrast and 0.3-0.6 of its fine detail. Heavy compression takes fine
   * detail too, but keeps the contrast between cells (coarseKept); veil.ts asks for both. NaN where
   * the reference cell has little fine detail (DETAIL_MIN_RMS).
   */
  detailKept: Float32Array;
  /** Per structured cell, median over frames: the normalised cross-correlation of its structure with the reference's. NaN for other cells. */
  correlation: Float32Array;
  /**
   * The view's colour change, median over frames: the largest change of a channel's share (b, g,
   * r) / (b + g + r), median over the cells in view. A coloured film or a colour cast moves it;
   * haze and a change of light hardly do.
   */
  colourShift: number;
}

// lowPass and detailRms pad the picture with black, which gives the edge cells a shared dark ramp;
// the masked cause's constants were set with it (it was opencv4nodejs's default), and mirroring
// the border needs them set again (docs/benchmarks.md, references from the stream).
export function lowPass(m: cv.Mat): cv.Mat {
  return m.gaussianBlur(new cv.Size(0, 0), MASK_LOWPASS_SIGMA, MASK_LOWPASS_SIGMA, cv.BORDER_CONSTANT);
}

/**
 * @param reference the reference at the working size, grey CV_32F, aligned to the clip's view
 * @param frames clip frames, grey CV_32F
 * @param referenceColours the (aligned) reference's cell colours (cells.ts readCellColours); frameColours likewise per frame
 */
export function measureMask(
  reference: cv.Mat,
  frames: cv.Mat[],
  referenceColours: CellColours,
  frameColours: CellColours[],
  inView: boolean[],
): MaskMeasurement {
  const ref = lowPass(reference);
  const refChroma = referenceColours.chroma;
  const r = cellMoments(ref);
  const refStd = r.variance.map(Math.sqrt);
  const textured = Array.from(refStd, (s, i) => inView[i] && s >= CELL_MIN_TEXTURE);
  const structured = Array.from(refStd, (s, i) => inView[i] && s >= CELL_STRUCTURED);
  const coveredVotes = new Array<number>(CELL_COUNT).fill(0);
  const keptPerFrame: Float32Array[] = [];
  const coarsePerFrame: Float32Array[] = [];
  const detailPerFrame: Float32Array[] = [];
  const correlationPerFrame: Float32Array[] = [];
  const colourShiftPerFrame: number[] = [];
  const frameBrightness: Float32Array[] = [];
  const refDetail = detailRms(ref);
  const detailFrames = new Set(spread([...frames.keys()], DETAIL_FRAMES));
  const refCoarse = neighbourhoodMoments(r.mean);
  const inViewCells = [...Array(CELL_COUNT).keys()].filter((i) => inView[i]);
  frames.forEach((frame, k) => {
    const f = lowPass(frame);
    const chroma = frameColours[k].chroma;
    const colourShift = [0, 1, 2].map((c) => median(inViewCells.map((i) => chroma[3 * i + c] - refChroma[3 * i + c])));
    colourShiftPerFrame.push(Math.max(...colourShift.map(Math.abs)));
    const saturation = cellSaturation(frameColours[k].means);
    // 9 in 10 cells: rounding a dark grey through 4:2:0 chroma tints a few cells of an infrared picture (up to 0.04)
    const monochrome = inViewCells.filter((i) => saturation[i] >= MONOCHROME_SATURATION).length < 0.1 * inViewCells.length;
    const colourDeparture = (i: number) =>
      monochrome ? 0 : Math.max(...[0, 1, 2].map((c) => Math.abs(chroma[3 * i + c] - refChroma[3 * i + c] - colourShift[c])));
    const fm = cellMoments(f);
    frameBrightness.push(fm.mean);
    const cross = readAndFree(f.hMul(ref), cellMeans);
    // the frame's overall brightness change, robust to a covered minority of cells
    const logRatios: number[] = [];
    for (let i = 0; i < CELL_COUNT; i++) if (textured[i]) logRatios.push(Math.log((fm.mean[i] + 4) / (r.mean[i] + 4)));
    const overall = median(logRatios);
    const correlation = new Float32Array(CELL_COUNT).fill(NaN);
    correlationPerFrame.push(correlation);
    const kept = new Float32Array(CELL_COUNT).fill(NaN);
    for (let i = 0; i < CELL_COUNT; i++) {
      if (!structured[i]) continue;
      if (fm.mean[i] > HIGHLIGHT_LEVEL && fm.mean[i] > r.mean[i]) {
        kept[i] = 1; // a brightened highlight: the camera's roll-off compresses it, not a veil
        continue;
      }
      const absolute = Math.sqrt(fm.variance[i]) / refStd[i];
      kept[i] = Math.max(absolute, (absolute * (r.mean[i] + CONTRAST_DARK_OFFSET)) / (fm.mean[i] + CONTRAST_DARK_OFFSET));
    }
    keptPerFrame.push(kept);
    if (detailFrames.has(k)) {
      const detail = new Float32Array(CELL_COUNT).fill(NaN);
      const frameDetail = detailRms(f);
      for (let i = 0; i < CELL_COUNT; i++) {
        if (!structured[i] || refDetail[i] < DETAIL_MIN_RMS) continue;
        const absolute = frameDetail[i] / refDetail[i];
        detail[i] = Math.max(absolute, (absolute * (r.mean[i] + CONTRAST_DARK_OFFSET)) / (fm.mean[i] + CONTRAST_DARK_OFFSET));
      }
      detailPerFrame.push(detail);
    }
    const coarse = new Float32Array(CELL_COUNT).fill(NaN);
    const frameCoarse = neighbourhoodMoments(fm.mean);
    for (let i = 0; i < CELL_COUNT; i++) {
      if (!structured[i] || refCoarse.std[i] < COARSE_MIN_STD) continue;
      const absolute = frameCoarse.std[i] / refCoarse.std[i];
      coarse[i] = Math.max(absolute, (absolute * (refCoarse.mean[i] + CONTRAST_DARK_OFFSET)) / (frameCoarse.mean[i] + CONTRAST_DARK_OFFSET));
    }
    coarsePerFrame.push(coarse);
    for (let i = 0; i < CELL_COUNT; i++) {
      if (!inView[i]) continue;
      const departure = Math.abs(Math.log((fm.mean[i] + 4) / (r.mean[i] + 4)) - overall);
      if (!textured[i]) {
        if (departure > PLAIN_CELL_DEPARTURE || colourDeparture(i) > CELL_COLOUR_DEPARTURE) coveredVotes[i]++;
        continue;
      }
      const fStd = Math.sqrt(fm.variance[i]);
      let covered = false;
      if (structured[i]) {
        const denom = fStd * refStd[i];
        const ncc = denom > 1e-6 ? (cross[i] - fm.mean[i] * r.mean[i]) / denom : 0;
        correlation[i] = ncc;
        covered = ncc < CELL_COVERED_NCC;
      }
      if (!covered && fStd < CELL_FLATTENED_RATIO * refStd[i]) {
        covered = departure > CELL_BRIGHTNESS_DEPARTURE || colourDeparture(i) > CELL_COLOUR_DEPARTURE;
      }
      if (covered) coveredVotes[i]++;
    }
    f.release();
  });
  ref.release();
  const covered = coveredVotes.map((v, i) => inView[i] && v * 2 > frames.length);
  const contrastKept = new Float32Array(CELL_COUNT).fill(NaN);
  const coarseKept = new Float32Array(CELL_COUNT).fill(NaN);
  const detailKept = new Float32Array(CELL_COUNT).fill(NaN);
  const correlation = new Float32Array(CELL_COUNT).fill(NaN);
  for (let i = 0; i < CELL_COUNT; i++) {
    if (!structured[i]) continue;
    correlation[i] = median(correlationPerFrame.map((k) => k[i]));
    contrastKept[i] = median(keptPerFrame.map((k) => k[i]));
    coarseKept[i] = median(coarsePerFrame.map((k) => k[i]));
    if (refDetail[i] >= DETAIL_MIN_RMS) detailKept[i] = median(detailPerFrame.map((k) => k[i]));
  }
  const inViewCount = inView.filter(Boolean).length;
  return {
    referenceBrightness: r.mean,
    frameBrightness,
    coveredFraction: inViewCount > 0 ? largestRegion(covered) / inViewCount : 0,
    coveredAnywhere: inViewCount > 0 ? covered.filter(Boolean).length / inViewCount : 0,
    covered,
    textured,
    structured,
    contrastKept,
    coarseKept,
    detailKept,
    correlation,
    colourShift: median(colourShiftPerFrame),
  };
}

/** Per cell, the RMS of a low-passed picture's fine-detail band: the picture less a wider blur of it, at half size. */
function detailRms(lowPassed: cv.Mat): Float32Array {
  const half = lowPassed.pyrDown();
  const wide = half.gaussianBlur(new cv.Size(0, 0), DETAIL_BAND_SIGMA / 2, DETAIL_BAND_SIGMA / 2, cv.BORDER_CONSTANT);
  const band = half.sub(wide);
  for (const m of [half, wide]) m.release();
  return readAndFree(band, (b) => readAndFree(b.hMul(b), cellMeans)).map(Math.sqrt);
}

/** Mean and std of the cell means over each cell's 3x3 neighbourhood (clipped at the grid's edge). */
function neighbourhoodMoments(means: Float32Array): { mean: Float32Array; std: Float32Array } {
  const mean = new Float32Array(CELL_COUNT);
  const std = new Float32Array(CELL_COUNT);
  for (let i = 0; i < CELL_COUNT; i++) {
    const r = Math.floor(i / GRID_COLS);
    const c = i % GRID_COLS;
    let n = 0;
    let sum = 0;
    let sq = 0;
    for (let rr = Math.max(0, r - 1); rr <= Math.min(GRID_ROWS - 1, r + 1); rr++) {
      for (let cc = Math.max(0, c - 1); cc <= Math.min(GRID_COLS - 1, c + 1); cc++) {
        const v = means[rr * GRID_COLS + cc];
        n++;
        sum += v;
        sq += v * v;
      }
    }
    mean[i] = sum / n;
    std[i] = Math.sqrt(Math.max(0, sq / n - mean[i] * mean[i]));
  }
  return { mean, std };
}

/** Cell count of the largest 8-connected region of true cells on the grid. */
export function largestRegion(cells: boolean[]): number {
  return Math.max(0, ...connectedRegions(cells).map((r) => r.length));
}

/** The 8-connected regions of true cells on the grid, each as its cell indices. */
export function connectedRegions(cells: boolean[]): number[][] {
  const seen = new Uint8Array(CELL_COUNT);
  const regions: number[][] = [];
  for (let start = 0; start < CELL_COUNT; start++) {
    if (!cells[start] || seen[start]) continue;
    const region: number[] = [];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const i = stack.pop()!;
      region.push(i);
      const r = Math.floor(i / GRID_COLS);
      const c = i % GRID_COLS;
      for (let dr = -1; dr <= 1; dr++) {
        for (let dc = -1; dc <= 1; dc++) {
          const rr = r + dr;
          const cc = c + dc;
          if (rr < 0 || cc < 0 || rr >= GRID_ROWS || cc >= GRID_COLS) continue;
          const j = rr * GRID_COLS + cc;
          if (cells[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
      }
    }
    regions.push(region);
  }
  return regions;
}
