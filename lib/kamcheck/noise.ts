// Sensor noise at the working size, as the sharpness measure sees it. Measurement: Immerkaer's
// estimate per cell, and the lower quartile over the cells in view: the flattest
// cells carry the least structure and the most honest figure.
import cv, { readAndFree } from '../video/opencv.js';
import { quantile } from '../stats.js';
import { CELL_COUNT, cellMeans } from './cells.js';
import { IMMERKAER, SIGMA_PER_RESPONSE } from './immerkaer.js';


/** Noise sigma (grey levels at the working size) of a grey CV_32F picture. */
export function noiseSigma(gray32: cv.Mat, inView?: boolean[]): number {
  const cells = readAndFree(gray32.filter2D(-1, IMMERKAER), (response) => readAndFree(response.abs(), cellMeans));
  const values: number[] = [];
  for (let i = 0; i < CELL_COUNT; i++) if (!inView || inView[i]) values.push(cells[i] * SIGMA_PER_RESPONSE);
  return values.length > 0 ? quantile(values, 0.25) : 0;
}

