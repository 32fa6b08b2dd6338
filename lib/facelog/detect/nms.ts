// Merging of overlapping candidates, as MediaPipe's NonMaxSuppressionCalculator does for
// BlazeFace (algorithm WEIGHTED): the best-scoring candidate takes every remaining candidate that
// overlaps it by more than the threshold, and its box and keypoints become their score-weighted
// mean. Averaging neighbouring anchors steadies the box from frame to frame more than plain NMS.
import { iou } from '../geometry.js';
import type { RawFace } from './decode.js';

/** MediaPipe's min_suppression_threshold for the face detector (IoU). */
export const NMS_IOU_THRESHOLD = 0.3;

export function weightedNms(faces: RawFace[], iouThreshold = NMS_IOU_THRESHOLD): RawFace[] {
  const remaining = [...faces].sort((a, b) => b.score - a.score);
  const merged: RawFace[] = [];
  while (remaining.length > 0) {
    const best = remaining[0];
    const group: RawFace[] = [];
    const rest: RawFace[] = [];
    for (const f of remaining) (iou(best.box, f.box) > iouThreshold ? group : rest).push(f);
    remaining.length = 0;
    remaining.push(...rest);
    merged.push(group.length === 1 ? best : weightedMean(group, best.score));
  }
  return merged;
}

function weightedMean(group: RawFace[], score: number): RawFace {
  let total = 0;
  let x1 = 0;
  let y1 = 0;
  let x2 = 0;
  let y2 = 0;
  const keypoints = group[0].keypoints.map(() => ({ x: 0, y: 0 }));
  for (const f of group) {
    total += f.score;
    x1 += f.box.x * f.score;
    y1 += f.box.y * f.score;
    x2 += (f.box.x + f.box.width) * f.score;
    y2 += (f.box.y + f.box.height) * f.score;
    f.keypoints.forEach((p, k) => {
      keypoints[k].x += p.x * f.score;
      keypoints[k].y += p.y * f.score;
    });
  }
  for (const p of keypoints) {
    p.x /= total;
    p.y /= total;
  }
  return { box: { x: x1 / total, y: y1 / total, width: (x2 - x1) / total, height: (y2 - y1) / total }, score, keypoints };
}
