// Cause "moved": the camera looks elsewhere than in the reference (turned, pushed, rotated).
// Measurement: the similarity transform (translation, rotation, zoom) from a few frames to the
// reference, by ORB features matched across the two and a RANSAC fit (or from the clip's per-pixel
// median, where the frames' own fits are weak: rain, snow, night noise); reported as the largest
// displacement of a view corner, as a fraction of the view width. The transform is also used to
// compensate the shift before the other causes compare cells, so a moved camera does not also
// look masked or blurred.
import cv from '../video/opencv.js';
import { median } from '../stats.js';
import { CELL_COUNT, GRID_COLS, GRID_ROWS, WorkingSize } from './cells.js';
import { perPixelMedian } from './pixel-median.js';

/** Frames matched against the reference (first, middle, last): people move, the background does not. */
export const SHIFT_SAMPLE_FRAMES = 3;
/** 12: below this many RANSAC inliers a fit on a 320 px view is as likely chance as structure. */
export const SHIFT_MIN_INLIERS = 12;
/** 2 px at 320 px: RANSAC reprojection tolerance (ORB keypoints are precise to ~1 px at this size). */
export const SHIFT_RANSAC_PX = 2;
/** 0.15: largest zoom change of a plausible fit (the moved fixtures fit at 0.98-1.02). */
export const SHIFT_MAX_SCALE_CHANGE = 0.15;
/**
 * Inliers (twice SHIFT_MIN_INLIERS) below which the sampled frames' fit is weak, and the clip's
 * per-pixel median is fitted too. A static scene by day gives 190-250; the night's rain, snow and
 * gain noise, 0-24 (1920x1080 clips of the bench, whose median picture gives 77-144).
 */
export const SHIFT_WEAK_INLIERS = 24;
/** 0.004 of the width (1.3 px): smaller displacements are left uncompensated (noise of the fit). */
export const SHIFT_COMPENSATE_MIN = 0.004;

// 300 features on 3 pyramid levels: 2.5 ms per picture at 320 px, and 190-250 inliers on a static
// scene; more levels buy zoom invariance, which a camera moved on its mount does not need
const ORB = new cv.ORBDetector({ maxFeatures: 300, nLevels: 3, edgeThreshold: 15, patchSize: 15, fastThreshold: 12 });
/** Hamming distance (of 256 bits) above which a match is no evidence; RANSAC sorts out the rest. */
const MAX_MATCH_DISTANCE = 64;

export interface CameraShift {
  /** 2x3 similarity mapping frame pixels to reference pixels (working size); null when unknown. */
  matrix: number[] | null;
  /** Largest displacement of a view corner, fraction of the view width; 0 when unknown. */
  displacement: number;
  /** Median RANSAC inliers of the sampled frames, or of the clip's median picture when it fitted (0 when no fit). */
  inliers: number;
}

interface Features {
  keyPoints: cv.KeyPoint[];
  descriptors: cv.Mat;
}

function features(gray8: cv.Mat, checked?: cv.Mat): Features {
  const keyPoints = checked ? ORB.detect(gray8, checked) : ORB.detect(gray8);
  const descriptors = keyPoints.length > 0 ? ORB.compute(gray8, keyPoints) : new cv.Mat();
  return { keyPoints, descriptors };
}

function fit(frame: Features, ref: Features): { matrix: number[]; inliers: number } | null {
  if (frame.keyPoints.length < SHIFT_MIN_INLIERS || ref.keyPoints.length < SHIFT_MIN_INLIERS) return null;
  // plain nearest-neighbour matching: 1.5 ms for 300x300 descriptors, against 6.5 ms for the
  // binding's cross-checked BFMatcher, and RANSAC rejects the extra outliers anyway. One match per
  // reference keypoint (the closest): on a flat, heavily compressed picture many frame keypoints
  // pick the same reference keypoint, and RANSAC then "fits" a collapse onto that point.
  const best = new Map<number, cv.DescriptorMatch>();
  for (const m of cv.matchBruteForceHamming(frame.descriptors, ref.descriptors)) {
    if (m.distance > MAX_MATCH_DISTANCE) continue;
    const prev = best.get(m.trainIdx);
    if (!prev || m.distance < prev.distance) best.set(m.trainIdx, m);
  }
  const matches = [...best.values()];
  if (matches.length < SHIFT_MIN_INLIERS) return null;
  const from = matches.map((m) => frame.keyPoints[m.queryIdx].pt);
  const to = matches.map((m) => ref.keyPoints[m.trainIdx].pt);
  const { out, inliers } = cv.estimateAffinePartial2D(from, to, cv.RANSAC, SHIFT_RANSAC_PX, 2000, 0.99, 10);
  if (!out || out.empty) return null;
  const count = inliers.countNonZero();
  if (count < SHIFT_MIN_INLIERS) return null;
  const m = out.getDataAsArray() as number[][];
  // a camera moved on its mount turns and shifts but does not zoom: a fit with another scale is chance
  if (Math.abs(Math.hypot(m[0][0], m[1][0]) - 1) > SHIFT_MAX_SCALE_CHANGE) return null;
  return { matrix: [m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2]], inliers: count };
}

/** Where the 2x3 `matrix` maps the point (x, y). */
function transform(matrix: number[], x: number, y: number): [number, number] {
  return [matrix[0] * x + matrix[1] * y + matrix[2], matrix[3] * x + matrix[4] * y + matrix[5]];
}

/** Largest corner displacement of `matrix`, in pixels. */
function cornerDisplacement(matrix: number[], size: WorkingSize): number {
  let worst = 0;
  for (const [x, y] of [[0, 0], [size.width, 0], [0, size.height], [size.width, size.height]]) {
    const [u, v] = transform(matrix, x, y);
    worst = Math.max(worst, Math.hypot(u - x, v - y));
  }
  return worst;
}

/** @param checked where features may be taken (a camera's ignored areas left out); everywhere when absent */
export function estimateShift(reference8: cv.Mat, frames8: cv.Mat[], size: WorkingSize, checked?: cv.Mat): CameraShift {
  const ref = features(reference8, checked);
  const picks = new Set([0, Math.floor((frames8.length - 1) / 2), frames8.length - 1].slice(0, SHIFT_SAMPLE_FRAMES));
  const fits = [...picks].map((i) => fit(features(frames8[i], checked), ref)).filter((f) => f !== null);
  const asShift = (matrix: number[], inliers: number): CameraShift => ({ matrix, displacement: cornerDisplacement(matrix, size) / size.width, inliers });
  let shift: CameraShift = { matrix: null, displacement: 0, inliers: 0 };
  // a majority of the sampled frames must agree that there is a fit at all
  if (fits.length > 0 && fits.length * 2 >= picks.size) {
    // the fit with the median displacement: one frame dominated by a passer-by does not decide
    const scored = fits.map((f) => asShift(f.matrix, f.inliers)).sort((a, b) => a.displacement - b.displacement);
    shift = { ...scored[Math.floor((scored.length - 1) / 2)], inliers: median(fits.map((f) => f.inliers)) };
  }
  if (shift.inliers >= SHIFT_WEAK_INLIERS || frames8.length < 3) return shift;
  // rain, snow and the noise of a night camera put corners of their own in every frame, and the
  // scene's few are lost among them: the clip's per-pixel median keeps the scene and drops them
  const still = perPixelMedian(frames8);
  try {
    const m = fit(features(still, checked), ref);
    return m && m.inliers > shift.inliers ? asShift(m.matrix, m.inliers) : shift;
  } finally {
    if (!frames8.includes(still)) still.release();
  }
}

/**
 * The displacement as evidence of a moved camera: a fit held by fewer than SHIFT_WEAK_INLIERS
 * inliers counts in proportion to them, since at SHIFT_MIN_INLIERS it is as likely chance as
 * structure. A heavily compressed 320x240 clip fits its own blocks to a 1.2 degree turn with 12
 * inliers; every moved camera of ten bench draws (400 clips) fits with 27 and more.
 */
export function supportedDisplacement(shift: CameraShift): number {
  return shift.displacement * Math.min(1, shift.inliers / SHIFT_WEAK_INLIERS);
}

/** The reference resampled into the frame's geometry (identity when the shift is negligible or unknown). */
export function alignReference(reference: cv.Mat, shift: CameraShift): cv.Mat {
  if (!shift.matrix || shift.displacement < SHIFT_COMPENSATE_MIN) return reference;
  const m = shift.matrix;
  const mat = new cv.Mat([[m[0], m[1], m[2]], [m[3], m[4], m[5]]], cv.CV_64F);
  return reference.warpAffine(mat, new cv.Size(reference.cols, reference.rows), cv.INTER_LINEAR + cv.WARP_INVERSE_MAP, cv.BORDER_REPLICATE);
}

/** The shift between pictures of half the size: the same turn and zoom, half the translation. */
export function atHalfScale(shift: CameraShift): CameraShift {
  const m = shift.matrix;
  return m ? { ...shift, matrix: [m[0], m[1], m[2] / 2, m[3], m[4], m[5] / 2] } : shift;
}

/** Which grid cells of the frame are entirely seen in the (shifted) reference. */
export function cellsInView(shift: CameraShift, size: WorkingSize): boolean[] {
  const inView = new Array<boolean>(CELL_COUNT).fill(true);
  if (!shift.matrix || shift.displacement < SHIFT_COMPENSATE_MIN) return inView;
  const m = shift.matrix;
  const cw = size.width / GRID_COLS;
  const ch = size.height / GRID_ROWS;
  for (let r = 0; r < GRID_ROWS; r++) {
    for (let c = 0; c < GRID_COLS; c++) {
      for (const [x, y] of [[c * cw, r * ch], [(c + 1) * cw, r * ch], [c * cw, (r + 1) * ch], [(c + 1) * cw, (r + 1) * ch]]) {
        const [u, v] = transform(m, x, y);
        if (u < 0 || v < 0 || u > size.width || v > size.height) inView[r * GRID_COLS + c] = false;
      }
    }
  }
  return inView;
}
