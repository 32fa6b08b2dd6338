// Cause "frozen": the feed repeats one picture (a replayed still, a hung encoder), so nothing in
// the view moves between consecutive decoded frames. Measurement: the share of consecutive frame pairs that are still, i.e. where almost no working
// pixel changed by more than a couple of grey levels. A one-frame clip cannot be frozen.
//
// Limit, measured with x264 (veryfast) on building.jpg at 640x480 with sensor noise sigma 3 and no
// motion at all: the full-resolution mean absolute difference between consecutive decoded frames is
// 0.16-0.32 grey levels at CRF 18, 0.01-0.06 at CRF 23, < 0.011 at CRF 30 and 0 (bit-identical
// frames) at CRF >= 40; a repeated frame encoded at CRF 19-24 gives 0.001-0.05. So after
// compression, sensor noise does not separate a live static view from a frozen one; only motion in
// the view does. This measurement therefore looks for motion (changes of more than a couple of grey
// levels at the working size), which compression does not create or remove: the heavy-compression
// fixtures (CRF 42-50, with passers-by) have no still pair. A view with no motion at all for the
// whole clip scores as frozen.
//
// Tried and dropped: also requiring that almost no full-resolution pixel changed at all (what is
// left of sensor noise). It separates live from frozen in a 640x480 building.jpg test with noise
// sigma 3 up to CRF 33, but not on the fixtures: a frozen vtest.avi clip at 1920x1080, CRF 19,
// changed 0.021 of its pixels between spread frames (x264 keeps refining the repeated picture),
// a motionless live still at 1280x720, CRF 21, noise sigma 1.2, only 0.012.
import cv from '../video/opencv.js';
import { nearestRankQuantile } from '../stats.js';

/** Grey levels: a working pixel changed when it moved more than this (codec refinements of a repeated frame stay below). */
export const FREEZE_PIXEL_DELTA = 2;
/** A pair is still when fewer than this share of working pixels changed (1/1000 = 77 px at 320x240). */
export const FREEZE_PAIR_MAX_CHANGED = 0.001;

export interface FreezeMeasurement {
  /** Still pairs / consecutive pairs, 0..1; 0 for one frame. */
  stillPairs: number;
  /** Median share of changed pixels between consecutive frames. */
  medianChanged: number;
}

/** @param checked the pixels that count (a camera's ignored areas left out); all when absent */
export function measureFreeze(frames8: cv.Mat[], checked?: cv.Mat): FreezeMeasurement {
  if (frames8.length < 2) return { stillPairs: 0, medianChanged: 1 };
  const changed: number[] = [];
  const counted = checked ? Math.max(1, checked.countNonZero()) : frames8[0].rows * frames8[0].cols;
  for (let i = 1; i < frames8.length; i++) {
    const moved = frames8[i].absdiff(frames8[i - 1]);
    const diff = moved.threshold(FREEZE_PIXEL_DELTA, 255, cv.THRESH_BINARY);
    const counts = checked ? diff.bitwiseAnd(checked) : diff;
    changed.push(counts.countNonZero() / counted);
    for (const m of new Set([moved, diff, counts])) m.release();
  }
  const still = changed.filter((c) => c < FREEZE_PAIR_MAX_CHANGED).length;
  return { stillPairs: still / changed.length, medianChanged: nearestRankQuantile(changed, 0.5) };
}
