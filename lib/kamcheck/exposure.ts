// Cause "exposure": the picture is burnt out (light shone into the lens, iris forced open) or
// drowned in dark (iris closed, lens sprayed grey, lights off). Measurement: the brightness change
// against the reference in stops (log2 of mean grey), and the share of pixels that became
// saturated white or crushed black, median over frames. A camera's normal gain changes stay
// within about +-0.75 stop and roll highlights off rather than clipping them.
import cv from '../video/opencv.js';
import { median } from '../stats.js';

/** Grey level at or above which a working-size pixel is saturated. */
export const SATURATED_LEVEL = 250;
/** Grey level at or below which a working-size pixel is crushed black. */
export const CRUSHED_LEVEL = 8;

export interface LumaStats {
  mean: number;
  saturated: number;
  crushed: number;
  /** Cumulative histogram, 256 entries, 0..1. */
  cdf: Float64Array;
}

/** @param checked the pixels that count (a camera's ignored areas left out); all when absent */
export function lumaStats(gray8: cv.Mat, checked?: cv.Mat): LumaStats {
  const axes = [new cv.HistAxes({ channel: 0, bins: 256, ranges: [0, 256] })];
  const hist = checked ? cv.calcHist(gray8, axes, checked) : cv.calcHist(gray8, axes);
  const counts = hist.getDataAsArray() as unknown as number[][];
  let total = 0;
  for (let v = 0; v < 256; v++) total += counts[v][0];
  total = Math.max(total, 1);
  const cdf = new Float64Array(256);
  let acc = 0;
  let sum = 0;
  for (let v = 0; v < 256; v++) {
    const c = counts[v][0];
    acc += c;
    sum += c * v;
    cdf[v] = acc / total;
  }
  return { mean: sum / total, saturated: 1 - cdf[SATURATED_LEVEL - 1], crushed: cdf[CRUSHED_LEVEL], cdf };
}

export interface ExposureMeasurement {
  /** log2 of clip/reference mean grey (+4 grey levels so black frames stay finite); + brighter. */
  stops: number;
  /** Share of pixels saturated in the clip minus in the reference. */
  newlySaturated: number;
  /** Share of pixels crushed black in the clip minus in the reference. */
  newlyCrushed: number;
}

export function measureExposure(reference: LumaStats, frames: LumaStats[]): ExposureMeasurement {
  const mean = median(frames.map((f) => f.mean));
  return {
    stops: Math.log2((mean + 4) / (reference.mean + 4)),
    newlySaturated: median(frames.map((f) => f.saturated)) - reference.saturated,
    newlyCrushed: median(frames.map((f) => f.crushed)) - reference.crushed,
  };
}
