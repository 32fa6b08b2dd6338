// The common ground of all cause measurements: every picture is analysed in grey at one working
// resolution, and compared with the reference cell by cell on a fixed grid, so that a measurement
// means the same at 320x240 and at 1920x1080 and a few walking people touch only a few cells.
import cv, { readAndFree } from '../video/opencv.js';
import { fineNoiseSigma } from './fine-noise.js';

/** 320 px: detail finer than 1/320 of the view is below what any cause needs, and it keeps a 25-frame clip cheap. */
export const WORKING_WIDTH = 320;
/**
 * 16 x 12 cells (20x20 px at 4:3, 20x15 px at 16:9): fine enough that a mask covering 30% of the
 * view covers whole cells (with 8x6 cells a third of a 30% mask fell on partly covered cells), coarse
 * enough for stable statistics (300-400 px per cell); a pedestrian of vtest.avi covers 1-2 cells.
 */
export const GRID_COLS = 16;
export const GRID_ROWS = 12;
export const CELL_COUNT = GRID_COLS * GRID_ROWS;

export interface WorkingSize {
  width: number;
  height: number;
}

export function workingSize(cols: number, rows: number): WorkingSize {
  const height = Math.max(GRID_ROWS, Math.round((WORKING_WIDTH * rows) / cols / GRID_ROWS) * GRID_ROWS);
  return { width: WORKING_WIDTH, height };
}

/** A picture at the working size: colour (for the colour of cells) and grey (for everything else). */
export interface WorkingPicture {
  bgr: cv.Mat;
  gray: cv.Mat;
  /** Sensor noise sigma at the picture's own size (fine-noise.ts), read before the reduction averages it away; on NOISE_FRAMES of a clip's frames. */
  fineNoise?: number;
}

/** BGR picture -> 8-bit colour and grey at the working size (area-averaged, which also averages sensor noise). */
export function toWorking(bgr: cv.Mat, size: WorkingSize, readNoise = true): WorkingPicture {
  const fineNoise = readNoise ? fineNoiseSigma(bgr) : undefined;
  let small = bgr;
  // a bilinear halving to twice the working size first: 1.1 ms instead of 1.8-4 ms for one area
  // resize of a 1280x720 BGR frame (single-threaded OpenCV), with the same averaging of noise
  if (small.cols > 2 * size.width) small = small.resize(2 * size.height, 2 * size.width, 0, 0, cv.INTER_LINEAR);
  if (small.cols !== size.width || small.rows !== size.height) {
    const step = small;
    small = small.resize(size.height, size.width, 0, 0, cv.INTER_AREA);
    if (step !== bgr) step.release();
  }
  if (small.channels === 1) return { bgr: small.cvtColor(cv.COLOR_GRAY2BGR), gray: small, fineNoise };
  return { bgr: small, gray: small.bgrToGray(), fineNoise };
}

/**
 * Mean B, G, R of each cell of a working-size colour picture, row-major triples (one native area
 * resize, about 0.35 ms at 320x240): what the colour measures (cellChromaticity, night.ts
 * cellSaturation) read, taken once per picture.
 */
export function cellColours(bgr: cv.Mat): Uint8Array {
  return readAndFree(bgr.resize(GRID_ROWS, GRID_COLS, 0, 0, cv.INTER_AREA), (cells) => cells.getData());
}

/**
 * Chromaticity of each cell, (b, g, r) / (b + g + r), row-major triples: what colour a cell is,
 * whatever its brightness (a shadow keeps it, a coloured sticker changes it).
 */
export function cellChromaticity(cells: Uint8Array): Float32Array {
  const out = new Float32Array(CELL_COUNT * 3);
  for (let i = 0; i < CELL_COUNT; i++) {
    // +12: dark cells have no reliable colour
    const sum = cells[3 * i] + cells[3 * i + 1] + cells[3 * i + 2] + 12;
    for (let c = 0; c < 3; c++) out[3 * i + c] = (cells[3 * i + c] + 4) / sum;
  }
  return out;
}

/** A picture's cell colours and their chromaticity: what the masked and the night measures both read, taken once. */
export interface CellColours {
  /** cellColours */
  means: Uint8Array;
  /** cellChromaticity of means */
  chroma: Float32Array;
}

export function readCellColours(bgr: cv.Mat): CellColours {
  const means = cellColours(bgr);
  return { means, chroma: cellChromaticity(means) };
}

/** Frames of the spread ones whose fine noise is read (1-5 ms each at 1080p): a median of 3 ignores a passer-by. */
export const NOISE_FRAMES = 3;

/** Whether the k-th of `count` spread frames is one of the NOISE_FRAMES. */
export function readsNoise(k: number, count: number): boolean {
  return spread([...Array(count).keys()], NOISE_FRAMES).includes(k);
}

/** Indices of the pictures whose fine noise was read (NOISE_FRAMES of a clip's); all of them when none was. */
export function noiseReadFrames(pictures: WorkingPicture[]): number[] {
  const read = [...pictures.keys()].filter((k) => pictures[k].fineNoise !== undefined);
  return read.length > 0 ? read : [...pictures.keys()];
}

/** 9 frames, evenly spread, carry the per-cell statistics: the median over 9 already ignores passers-by. */
export const MAX_STATISTIC_FRAMES = 9;

/** Up to `max` items evenly spread over the list, first and last included. */
export function spread<T>(items: T[], max = MAX_STATISTIC_FRAMES): T[] {
  if (items.length <= max) return items;
  return Array.from({ length: max }, (_, i) => items[Math.round((i * (items.length - 1)) / (max - 1))]);
}

/** Mean of a working-size CV_32F Mat in each grid cell, row-major (one native area resize). */
export function cellMeans(m: cv.Mat): Float32Array {
  return readAndFree(m.resize(GRID_ROWS, GRID_COLS, 0, 0, cv.INTER_AREA), (cells) => {
    const buf = cells.getData();
    return new Float32Array(buf.buffer, buf.byteOffset, CELL_COUNT).slice();
  });
}

/** A map left in its own geometry. */
export const asIs = (map: cv.Mat): cv.Mat => map;

/**
 * cellMeans of `map` after `carry` takes it into another geometry (a new picture, freed here, or
 * the map itself): a mean of a map survives resampling where the detail of a picture does not.
 */
export function carriedCellMeans(map: cv.Mat, carry: (map: cv.Mat) => cv.Mat): Float32Array {
  const carried = carry(map);
  return carried === map ? cellMeans(map) : readAndFree(carried, cellMeans);
}

/** Per-cell mean and variance of a CV_32F picture, in the geometry `carry` takes its moments to. */
export function cellMoments(m: cv.Mat, carry: (map: cv.Mat) => cv.Mat = asIs): { mean: Float32Array; variance: Float32Array } {
  const mean = carriedCellMeans(m, carry);
  const sq = readAndFree(m.hMul(m), (m2) => carriedCellMeans(m2, carry));
  const variance = new Float32Array(CELL_COUNT);
  for (let i = 0; i < CELL_COUNT; i++) variance[i] = Math.max(0, sq[i] - mean[i] * mean[i]);
  return { mean, variance };
}

