// What a camera shows at night, as evidence that a darker picture is the night and not tampering:
// the noise of high gain (read at the picture's own size, since the working size averages it
// away), and colour fading to grey (cameras turn saturation down at high gain, and the switch to
// infrared makes the picture monochrome), and the shadows falling further than the lit parts.
// Brightness alone is no evidence: a closed iris or a sprayed lens darken a picture as the dusk
// does.
import { median } from '../stats.js';
import { CELL_COUNT, type CellColours } from './cells.js';
import { ramp } from './ramp.js';

/**
 * Fine noise sigma (grey levels at full size) from which the noise is that of high gain: none at
 * 1 and below, full at 2. Day clips of the bench keep 0.1-0.7 after compression (0.8-3.4 in the
 * noisy kind), under-exposed ones 0.5 at most; x264 at CRF 26-30 can take all of a night's noise.
 */
export const GAIN_NOISE_FROM = 1;
export const GAIN_NOISE_FULL = 2;
/**
 * Colour kept (colourKept) below which the fade is evidence: none at 0.75, full at 0.4. Against
 * the view's colour (colourKeptIn), under-exposed clips of the calibration draw keep 0.92-1.15 and
 * night clips at a third of the day's brightness 0-0.68 (their cameras' saturation 0.25-0.7).
 */
export const FADED_COLOUR_FROM = 0.75;
export const FADED_COLOUR_FULL = 0.4;
/**
 * How much of a fade counts where the saturation ratio stands in (colourKeptIn finds too few
 * coloured cells): a grey scene's few, faintly coloured cells keep a few grey levels of colour in
 * a darker picture, and the encoder takes those whether or not the camera turned its saturation
 * down. 7 of 22 under-exposed clips of grey scenes (seeds 13, 19, 23, 41) kept 0-0.63 there, as
 * night clips do, and three were excused (22-48); night_dark clips of grey scenes whose encoder
 * took their noise too have the fade as their only night sign. At 0.6 the benign clips of grey
 * scenes score 34 at most on the eight night draws (a lamps clip, as at 1) and those
 * under-exposures 71 and more (at 0.5: 46 and 77; at 0.7: 34 and 59).
 */
export const STAND_IN_FADE_WEIGHT = 0.6;
/**
 * Colour kept below which the picture is monochrome, as after the switch to infrared: a fade that
 * counts however bright the picture. A paler picture that is not darker is no night (a grey or
 * coloured paint mist takes colour too, at the same brightness), so short of monochrome a fade
 * counts as the picture is darker: not at 0.3 stops darker, in full from 0.7 (night low light is
 * 0.7 stops and more darker than a day reference; a spray mist 0-0.25).
 */
export const MONOCHROME_KEPT = 0.15;
export const FADE_DARKER_FROM_STOPS = 0.3;
/**
 * Stops darker from which a monochrome picture is at night (atNight), short of
 * FADE_DARKER_FROM_STOPS: an infrared illuminator falls off towards the corners and the infrared
 * picture has its own curve, which take contrast from the whole view as a veil does (a 320x240
 * switch of the held-out seed 19, corners at 0.36, gamma 0.73, 0.25 stops darker: 0.64 of the
 * view's contrast lost, masked 100 when it was judged as by day). A fogged window is as grey, but
 * its glare adds light: 0.14-0.53 stops brighter on the day draws.
 */
export const MONOCHROME_DARKER_STOPS = 0.1;
export const FADE_DARKER_FULL_STOPS = 0.7;
/**
 * The slope of the clip's cell brightness against the reference's (log against log, toneSlope)
 * from which the darkening took the shadows further than the lit parts: none at 1.02, full at
 * 1.12. A filter, a closed iris or a lower gain scale every part of the view alike (slope 1), and
 * the sensor's floor keeps the darkest parts up (under-exposed clips of the bench: 0.83-0.98 on
 * seeds 1 and 2). The night's light is not the day's: what no lamp reaches falls further, and a
 * camera's curve at high gain deepens it (night_dark clips of seeds 2, 7 and 11: 0.90-1.22; the
 * four of seed 7 that alarmed with their noise taken by x264 and their colour kept: 1.06-1.11).
 * It excuses darkening only (scorer.ts): it says nothing of the veil, the focus or the noise.
 */
export const DEEPER_SHADOWS_FROM = 1.02;
export const DEEPER_SHADOWS_FULL = 1.12;
/**
 * Share of the view shining as a light (lights.ts lightsShining) from which a darker picture is
 * excused its darkening: none at 0.00005 (4 pixels at 320x240), full from 0.0005. Under-exposed
 * and black clips of seeds 2, 7, 11, 13, 17, 19 and 23 have none (0 of 240), nor have the night
 * kinds without lights; of those draws' clips 0.3 stops or more darker, headlights a median 0.0037,
 * lamps 0.0007, rain and snow lit by them 0.0001. Like deeper shadows it excuses darkening only.
 */
export const LIGHTS_FROM = 0.00005;
export const LIGHTS_FULL = 0.0005;
/** Reference cell mean grey from which a cell takes part in toneSlope: below it the sensor's floor and the +4 offset flatten the relation. */
const TONE_MIN_LEVEL = 30;
/**
 * How far a cell's chromaticity lies from the view's (cellChromaticity, Euclidean) in the
 * reference for its colour to be seen to fade: about a saturation of 0.06 (cellSaturation).
 */
const COLOURED_CELL_DEPARTURE = 0.04;
/** Cells that departure needs, of those in view, for a clip's colour to be read at all. */
const COLOURED_CELLS_MIN = 8;
/** A cell's saturation in the reference from which its colour can be seen to fade. */
const COLOURED_CELL = 0.06;

export interface NightMeasurement {
  /** Fine noise sigma of the clip (median of the frames it was read on), grey levels at full size. */
  clipNoise: number;
  /** How much of the reference's colour the clip keeps (colourKeptIn, median of the frames whose noise was read); 1 when too little is coloured. */
  colourKept: number;
  /** Whether the saturation ratio stood in for colourKeptIn: the reference has too few coloured cells (STAND_IN_FADE_WEIGHT). */
  colourStoodIn: boolean;
  /** 0..1: how surely the clip's noise is that of high gain. */
  gainNoise: number;
  /** 0..1: how surely the clip shows a camera at night rather than a picture made darker. */
  evidence: number;
  /**
   * Whether the measures that change at night apply (measure.ts: the veil's thresholds, the lit
   * cells, the half-scale sharpness): the noise of high gain, or a night sign in a picture
   * FADE_DARKER_FROM_STOPS or more darker (MONOCHROME_DARKER_STOPS for a monochrome one). A
   * picture that is only paler is not at night: x264 at CRF 42-50 takes all colour from some day
   * scenes, and their fine detail with it, which the
   * half-scale measure reads as a defocus; a fogged window takes all colour too, and its veil
   * must count in full. (Monochrome still excuses darkening, as `evidence`: an infrared picture
   * need not be darker.)
   */
  atNight: boolean;
  /** Slope of log clip cell brightness against log reference cell brightness (toneSlope); 1 when it cannot be measured. */
  toneSlope: number;
  /** 0..1: how surely the darkening deepened the shadows more than the lit parts (DEEPER_SHADOWS_FROM). */
  deeperShadows: number;
  /** Share of the view shining as a light where the reference did not (lights.ts lightsShining). */
  shining: number;
  /** 0..1: how surely lights shine in the clip where the reference had none (LIGHTS_FROM). */
  lights: number;
  /** 0..1: how much of a darkening the night excuses (scorer.ts): the evidence, deeper shadows or lights, whichever is surest. */
  darkeningExcused: number;
  /**
   * 0..1: how much of the view's contrast loss the night excuses (scorer.ts, the veil over the
   * whole view): the evidence, as far as the clip is darker than its reference or its colours
   * faded from it. A clip as bright and as coloured as its reference was taken in its light: a
   * night against a night reference, or a noisy day (a 320x240 paint mist of the held-out draw
   * with 1.46 grey levels of fine noise, 0.01 stops darker, was excused to 18 without it). 0 for a
   * clip that is not atNight, as the veil's thresholds have always had it (measure.ts): a picture
   * only paler, not darker, is not night (a fogged window takes all colour at the day's
   * brightness; ungated, the thresholds let a fogged window and a partial smear of the held-out
   * day draw through, 100 to 1 and 8).
   */
  contrastLossExcused: number;
}

/**
 * The least-squares slope of log2(clip + 4) against log2(reference + 4) over the usable cells
 * bright enough in the reference (TONE_MIN_LEVEL), median over frames: 1 when the clip scales
 * the reference's cells alike, above 1 when its shadows fell further than its lit parts.
 */
export function toneSlope(reference: Float32Array, frames: Float32Array[], usable: boolean[]): number {
  const slopes: number[] = [];
  for (const means of frames) {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < CELL_COUNT; i++) {
      if (!usable[i] || reference[i] < TONE_MIN_LEVEL) continue;
      xs.push(Math.log2(reference[i] + 4));
      ys.push(Math.log2(means[i] + 4));
    }
    if (xs.length < 8) continue;
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    let sxy = 0;
    let sxx = 0;
    for (let k = 0; k < xs.length; k++) {
      sxy += (xs[k] - mx) * (ys[k] - my);
      sxx += (xs[k] - mx) ** 2;
    }
    if (sxx > 0) slopes.push(sxy / sxx);
  }
  return slopes.length > 0 ? median(slopes) : 1;
}

/** Per cell, (max - min) / (sum + 6) of its mean B, G, R (cells.ts cellColours): saturation that a change of gain keeps. */
export function cellSaturation(cells: Uint8Array): Float32Array {
  const out = new Float32Array(CELL_COUNT);
  for (let i = 0; i < CELL_COUNT; i++) {
    const b = cells[3 * i];
    const g = cells[3 * i + 1];
    const r = cells[3 * i + 2];
    out[i] = (Math.max(b, g, r) - Math.min(b, g, r)) / (b + g + r + 6);
  }
  return out;
}

/** Median over the reference's coloured cells of a frame's saturation over the reference's; 1 when nothing is coloured. */
function saturationKept(refSat: Float32Array, sat: Float32Array, inView: boolean[]): number {
  const ratios: number[] = [];
  for (let i = 0; i < CELL_COUNT; i++) if (inView[i] && refSat[i] >= COLOURED_CELL) ratios.push(sat[i] / refSat[i]);
  return ratios.length > 0 ? median(ratios) : 1;
}

/** Per channel, the median over the cells in view of a cellChromaticity map: the view's colour. */
function viewChromaticity(chroma: Float32Array, inView: boolean[]): number[] {
  return [0, 1, 2].map((c) => {
    const values = new Float32Array(CELL_COUNT);
    let n = 0;
    for (let i = 0; i < CELL_COUNT; i++) if (inView[i]) values[n++] = chroma[3 * i + c];
    return n > 0 ? median(values.subarray(0, n)) : 1 / 3;
  });
}

/** A cell of the reference whose colour departs from the view's: its chromaticity less the view's (B, G, R), and that departure's squared length. */
export interface ColouredCell {
  cell: number;
  departure: [number, number, number];
  norm: number;
}

/**
 * The reference's cells in view whose chromaticity departs from the view's colour by
 * COLOURED_CELL_DEPARTURE or more: the cells whose colour can be seen to fade (colourKeptIn).
 */
export function colouredCells(referenceChroma: Float32Array, inView: boolean[]): ColouredCell[] {
  const centre = viewChromaticity(referenceChroma, inView);
  const cells: ColouredCell[] = [];
  for (let i = 0; i < CELL_COUNT; i++) {
    if (!inView[i]) continue;
    const departure: [number, number, number] = [0, 1, 2].map((c) => referenceChroma[3 * i + c] - centre[c]) as [number, number, number];
    const norm = departure.reduce((sum, d) => sum + d * d, 0);
    if (norm >= COLOURED_CELL_DEPARTURE ** 2) cells.push({ cell: i, departure, norm });
  }
  return cells;
}

/**
 * How much of the reference's colour a frame keeps: per coloured cell (colouredCells), its
 * chromaticity's departure from the view's colour in the frame, projected on that departure in
 * the reference, over the reference's (median over the cells). A change of gain keeps every
 * cell's chromaticity (1); a camera turning its saturation down moves every cell towards the
 * view's colour (below 1). The light's own colour (sodium lamps, a white balance that drifts at
 * high gain) moves the view's colour and every cell's with it, which the departures leave out: a
 * per-cell saturation ratio reads a warm light on a faded scene as colour kept (a night clip of
 * seed 13 at saturation 0.53, warm 0.08: 0.90). The median stands against a passer-by or a
 * covered part of the view. Read only from COLOURED_CELLS_MIN cells (measureNight).
 */
export function colourKeptIn(coloured: ColouredCell[], frameChroma: Float32Array, inView: boolean[]): number {
  const centre = viewChromaticity(frameChroma, inView);
  const ratios = new Float64Array(coloured.length);
  coloured.forEach(({ cell, departure, norm }, k) => {
    let dot = 0;
    for (let c = 0; c < 3; c++) dot += departure[c] * (frameChroma[3 * cell + c] - centre[c]);
    ratios[k] = dot / norm;
  });
  return median(ratios);
}

export function measureNight(
  /** The (aligned) reference's cell colours (cells.ts readCellColours). */
  referenceColours: CellColours,
  /** The cell colours and fine noise of the frames whose noise was read (cells.ts noiseReadFrames): 3 are enough. */
  frames: { colours: CellColours; fineNoise?: number }[],
  inView: boolean[],
  /** Brightness change against the reference in stops (exposure.ts); negative darker. */
  stops: number,
  /** The clip's tone slope against the reference (toneSlope). */
  tone: number,
  /** The share of the view shining as a light where the reference did not (lights.ts lightsShining). */
  shining = 0,
): NightMeasurement {
  // too few coloured cells to tell the light's colour from the scene's: the saturation ratio stands in
  const coloured = colouredCells(referenceColours.chroma, inView);
  const colourStoodIn = coloured.length < COLOURED_CELLS_MIN;
  const refSat = colourStoodIn ? cellSaturation(referenceColours.means) : undefined;
  const colourKept = median(
    frames.map((f) =>
      refSat ? saturationKept(refSat, cellSaturation(f.colours.means), inView) : colourKeptIn(coloured, f.colours.chroma, inView),
    ),
  );
  const noises = frames.flatMap((f) => (f.fineNoise === undefined ? [] : [f.fineNoise]));
  const clipNoise = noises.length > 0 ? median(noises) : 0;
  const gainNoise = ramp(clipNoise, GAIN_NOISE_FROM, GAIN_NOISE_FULL);
  const darkerBy = ramp(-stops, FADE_DARKER_FROM_STOPS, FADE_DARKER_FULL_STOPS);
  const faded = ramp(colourKept, FADED_COLOUR_FROM, FADED_COLOUR_FULL) * (colourStoodIn ? STAND_IN_FADE_WEIGHT : 1);
  const evidence = Math.max(gainNoise, faded * (colourKept < MONOCHROME_KEPT ? 1 : darkerBy));
  const atNight = gainNoise > 0 || (evidence > 0 && stops <= -(colourKept < MONOCHROME_KEPT ? MONOCHROME_DARKER_STOPS : FADE_DARKER_FROM_STOPS));
  const deeperShadows = ramp(tone, DEEPER_SHADOWS_FROM, DEEPER_SHADOWS_FULL);
  const lights = ramp(shining, LIGHTS_FROM, LIGHTS_FULL);
  // how far the clip's light departs from the reference's: darker, or its colours faded
  const changed = Math.max(faded, darkerBy);
  return {
    clipNoise, colourKept, colourStoodIn, gainNoise, evidence, atNight, toneSlope: tone, deeperShadows, shining, lights,
    darkeningExcused: Math.max(evidence, deeperShadows, lights),
    contrastLossExcused: atNight ? evidence * changed : 0,
  };
}
