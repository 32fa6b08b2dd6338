// Blurring of faces beyond recognition (the `blur` parameter), so that results can be shared where
// privacy law requires it. A face is reduced to a few averaged cells and smoothly interpolated back
// to its size: what is left is its colours and where it was, no features. Frames are I420 and are
// blurred in place, each plane on its own (see video/yuv-frame.ts); pictures (thumbnails) are BGR.
import cv from '../../video/opencv.js';
import type { YuvFrame } from '../../video/yuv-frame.js';
import type { Box } from '../types.js';
import { expand, round } from '../geometry.js';

/**
 * Cells across a face box once blurred. People still recognise familiar faces from pictures of
 * about 7x10 pixels (Sinha et al., "Face recognition by humans: nineteen results", Proc. IEEE
 * 2006, result 1); 3 cells leave less than half of that across the face, and the linear
 * interpolation between them adds no edge a viewer could read as a feature.
 */
export const FACE_CELLS = 3;
/**
 * Margin blurred around the face box, as a share of its size on each side: the detector's box
 * stops at the brows and chin, and a track's box between two detections may lag the face by a
 * fraction of its width (the tracker follows it, see track/).
 */
export const BLUR_MARGIN = 0.25;

/** Blurs every face box (and its margin) in the frame's planes, in place. */
export function blurFaces(frame: YuvFrame, boxes: Box[]): void {
  const { width, height, data } = frame;
  for (const box of boxes) {
    const r = round(expand(box, BLUR_MARGIN, width, height));
    // Even corners, so that the chroma planes' half-size region covers exactly the same pixels.
    const x0 = r.x & ~1;
    const y0 = r.y & ~1;
    const x1 = Math.min(width, (r.x + r.width + 1) & ~1);
    const y1 = Math.min(height, (r.y + r.height + 1) & ~1);
    if (x1 - x0 < 2 || y1 - y0 < 2) continue;
    const cell = Math.max(box.width, box.height) / FACE_CELLS;
    blurPlane(data, 0, width, { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, cell);
    const chroma = { x: x0 / 2, y: y0 / 2, width: (x1 - x0) / 2, height: (y1 - y0) / 2 };
    blurPlane(data, width * height, width / 2, chroma, cell / 2);
    blurPlane(data, (width * height * 5) / 4, width / 2, chroma, cell / 2);
  }
}

/**
 * The whole picture blurred as a face box would be, for a crop of one face with `margin` (its
 * share of the face's size on each side) around it: the track thumbnails.
 */
export function blurPicture(picture: cv.Mat, margin: number): cv.Mat {
  return cellsBlur(picture, Math.max(picture.cols, picture.rows) / (1 + 2 * margin) / FACE_CELLS);
}

/** Blurs region `r` of one plane (`stride` bytes a row, starting at `offset` in `data`) with cells of `cell` pixels. */
function blurPlane(data: Buffer, offset: number, stride: number, r: Box, cell: number): void {
  // Only the region's own bytes are copied out of the frame (a Mat made from a Buffer is a copy,
  // and the rows a 300 px face spans at 1080p are 0.9 MB): 1.2 instead of 1.8 ms for such a face
  // (its three planes), 0.3 ms for a 60 px one.
  const bytes = Buffer.allocUnsafe(r.width * r.height);
  for (let y = 0; y < r.height; y++) {
    const start = offset + (r.y + y) * stride + r.x;
    data.copy(bytes, y * r.width, start, start + r.width);
  }
  const region = new cv.Mat(bytes, r.height, r.width, cv.CV_8UC1);
  const blurred = cellsBlur(region, cell);
  const out = blurred.getData();
  for (let y = 0; y < r.height; y++) out.copy(data, offset + (r.y + y) * stride + r.x, y * r.width, (y + 1) * r.width);
  for (const m of [region, blurred]) m.release();
}

/** Pixels a cell has while the cells are smoothed: enough for a smooth Gaussian, few enough to cost nothing. */
const SMOOTHING_CELL_PIXELS = 8;

/**
 * The picture reduced to cells of `cell` pixels (area averages) and brought back to its size,
 * smoothed on the way by a Gaussian of half a cell, which rounds off the creases that linear
 * interpolation between so few values leaves at the cells' centres. The Gaussian runs at
 * SMOOTHING_CELL_PIXELS a cell, not at full size: a 300 px face at 1080p would need a kernel of
 * 300 px there.
 */
function cellsBlur(picture: cv.Mat, cell: number): cv.Mat {
  const rows = cellCount(picture.rows, cell);
  const cols = cellCount(picture.cols, cell);
  const small = picture.resize(rows, cols, 0, 0, cv.INTER_AREA);
  const mid = small.resize(rows * SMOOTHING_CELL_PIXELS, cols * SMOOTHING_CELL_PIXELS, 0, 0, cv.INTER_LINEAR);
  const sigma = SMOOTHING_CELL_PIXELS / 2;
  // Replicated edges: the binding defaults to a border of zeros, which darkens the edges (and
  // turns them green in the chroma planes).
  const smooth = mid.gaussianBlur(new cv.Size(0, 0), sigma, sigma, cv.BORDER_REPLICATE);
  const blurred = smooth.resize(picture.rows, picture.cols, 0, 0, cv.INTER_LINEAR);
  for (const m of [small, mid, smooth]) m.release();
  return blurred;
}

function cellCount(pixels: number, cell: number): number {
  return Math.max(1, Math.round(pixels / Math.max(1, cell)));
}
