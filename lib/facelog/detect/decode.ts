// Turns BlazeFace's raw outputs for one 256x256 input into scored boxes and keypoints, in
// model-input pixels, as MediaPipe's TensorsToDetectionsCalculator does for the back model:
// per anchor 16 regressor values (box centre x, y, width, height, then six keypoints x, y), all in
// input pixels relative to the anchor centre, and one classification logit.
import type { Anchor } from './anchors.js';
import type { Box, Point } from '../types.js';

/** Values per anchor in the regressor output: 4 for the box, 2 for each of 6 keypoints. */
export const REGRESSOR_VALUES = 16;
export const KEYPOINTS = 6;
/** MediaPipe clips logits to +-100 before the sigmoid. */
const SCORE_CLIPPING = 100;

/** One candidate face in model-input pixels, before merging. */
export interface RawFace {
  box: Box;
  score: number;
  /** In MediaPipe's order: right eye, left eye, nose tip, mouth centre, right ear, left ear. */
  keypoints: Point[];
}

export function sigmoid(logit: number): number {
  const clipped = Math.max(-SCORE_CLIPPING, Math.min(SCORE_CLIPPING, logit));
  return 1 / (1 + Math.exp(-clipped));
}

/** The logit a score threshold corresponds to, to skip the sigmoid for most anchors. */
export function logit(score: number): number {
  return Math.log(score / (1 - score));
}

/**
 * Faces of one forward pass scoring at least `minScore`. `logits` has one value per anchor,
 * `regressors` REGRESSOR_VALUES per anchor, both in anchor order.
 */
export function decodeFaces(logits: Float32Array, regressors: Float32Array, anchors: Anchor[], minScore: number): RawFace[] {
  const minLogit = logit(minScore);
  const faces: RawFace[] = [];
  for (let i = 0; i < anchors.length; i++) {
    if (!(logits[i] >= minLogit)) continue;
    const r = i * REGRESSOR_VALUES;
    const { x: ax, y: ay } = anchors[i];
    const cx = ax + regressors[r];
    const cy = ay + regressors[r + 1];
    const w = regressors[r + 2];
    const h = regressors[r + 3];
    if (!(w > 0 && h > 0)) continue;
    const keypoints: Point[] = [];
    for (let k = 0; k < KEYPOINTS; k++) {
      keypoints.push({ x: ax + regressors[r + 4 + 2 * k], y: ay + regressors[r + 5 + 2 * k] });
    }
    faces.push({ box: { x: cx - w / 2, y: cy - h / 2, width: w, height: h }, score: sigmoid(logits[i]), keypoints });
  }
  return faces;
}
