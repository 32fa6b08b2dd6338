// Following a newly confirmed track's face backwards in time. The detector finds a face late: it
// looks at a region only when something moved there or the rotating whole-frame search comes by,
// and a small face it finds only once it has grown. The frames before the first detection still
// wait for the overlay (analyse.ts delays them), so KCF follows the face back through them.
//
// KCF keeps the size it was given, and a face walking towards the camera was smaller before; the
// box takes KCF's centre and the size the first two detections' growth gives, and KCF is
// re-initialised on it every few frames (as the forward tracker is at each detector run).
import { FaceKcf, type FramePyramid } from './kcf.js';
import type { Track } from './track.js';
import type { Box } from '../types.js';
import { area, centre, clip, intersection, iou } from '../geometry.js';
import { thumbnailRect } from '../track-evidence.js';
import cv from '../../video/opencv.js';
import { isDarkFace } from '../low-light.js';

/**
 * Only tracks whose first two detections score this much on average are followed back. False
 * tracks (backs of heads, blurred distant pedestrians, which get no sighting but stay in the XML)
 * would only get longer: on the bench set (51 videos) their first two detections averaged
 * 0.51-0.655 (31 tracks), those of real faces 0.58-0.94 (96 tracks, 2 below 0.66).
 */
export const MIN_BACKFILL_SCORE = 0.66;
/**
 * ...or this much when the first face is dark (low-light.ts, DARK_FACE_GREY), which the detector
 * scores lower. On the face-log night set (seed 3, 34 videos), tracks whose first two detections
 * averaged 0.6-0.66 with a dark first face (with its thumbnail margin, as isDark judges it): 8 real
 * faces (0.610-0.659), which were otherwise followed only from their first detection, and 2 false
 * tracks (0.610 and 0.650), which get longer; 3 more real faces at 0.59-0.595. With
 * MAX_GROWTH_PER_FRAME_DARK, 0.55 rather than 0.6 took one more person of seed 3's `dark` videos
 * into a track within 5 frames and added 12 stray face records at 640x480; on the held-out seed
 * 4 it took none and added 3 at 1280x720 (docs/benchmarks.md).
 */
export const MIN_BACKFILL_SCORE_DARK = 0.55;
/** Frames followed on one KCF before it is re-made on the current box. */
const REINIT_EVERY = 5;
/** Growth per frame taken from the first two detections is bounded to this (a detection's size varies ~10%). */
const MAX_GROWTH_PER_FRAME = 0.03;
/**
 * ...or to this when the first face is dark: a dark face's box varies more, and growth read from
 * two such boxes shrinks the face below the least width a few frames back. On the face-log night
 * set (seed 3, night-20) a second detection scoring 0.51 came out 47 px wide where the first was 32
 * px and the face 34-37: followed back from MIN_BACKFILL_SCORE_DARK, at 3% a frame the face was
 * followed 5 frames, to 27 px; at 1% to frame 13, where a whole-frame search first finds it, 2
 * frames after it reached 30 px.
 */
const MAX_GROWTH_PER_FRAME_DARK = 0.01;
/** A box with less than this share inside the frame has left it. */
const MIN_VISIBLE_SHARE = 0.5;
/** A box overlapping another track's face this much has drifted onto it... */
const MAX_OTHER_IOU = 0.3;
/**
 * ...or one that holds this share of it, or of itself in it: the same face at another size (a
 * dark face's box varies more, and a track found again close to the camera is followed back
 * onto the end of the track it continues, which the stitcher must still be able to join).
 */
const MAX_OTHER_SHARE = 0.5;

export interface BackfillOptions {
  width: number;
  height: number;
  /** Faces narrower than this are not followed further back. */
  minWidth: number;
  /** Faces of other tracks: a box onto one of them stops the backfill. */
  othersAt(frame: number): Box[];
}

/**
 * Boxes of `track`'s face in the frames before its first one, oldest first, as far back as
 * `frames` (consecutive, oldest first, ending at or after the track's start) and KCF reach.
 */
export function followBackwards(track: Track, frames: { index: number; pyramid(): FramePyramid }[], options: BackfillOptions): { frame: number; box: Box }[] {
  const start = track.startFrame;
  const [first, second] = track.detections;
  if (first.frame !== start || !second) return [];
  const at = new Map(frames.map((f) => [f.index, f]));
  const startFrame = at.get(start);
  if (!startFrame) return [];
  const score = (first.score + second.score) / 2;
  const startPyramid = startFrame.pyramid();
  const dark = isDark(startPyramid, first.box);
  if (score < MIN_BACKFILL_SCORE && (score < MIN_BACKFILL_SCORE_DARK || !dark)) return [];
  const growth = growthPerFrame(track, dark ? MAX_GROWTH_PER_FRAME_DARK : MAX_GROWTH_PER_FRAME);
  const velocity = velocityPerFrame(track);
  const found: { frame: number; box: Box }[] = [];
  let box = first.box;
  let kcf = new FaceKcf(startPyramid, box);
  let sinceInit = 0;
  for (let f = start - 1; at.has(f); f--) {
    const pyramid = at.get(f)!.pyramid();
    const moved = kcf.update(pyramid);
    if (!moved) break;
    // KCF gives the centre; the size shrinks back in time as the face grew.
    const c = centre(moved);
    const width = box.width / growth;
    const height = box.height / growth;
    // KCF's box keeps its init size: its centre is the measurement, and the face's own motion
    // guards against a jump (KCF locking onto the background).
    const expected = { x: centre(box).x - velocity.x, y: centre(box).y - velocity.y };
    if (Math.hypot(c.x - expected.x, c.y - expected.y) > Math.max(width, height)) break;
    const next = { x: c.x - width / 2, y: c.y - height / 2, width, height };
    if (next.width < options.minWidth) break;
    if (area(clip(next, options.width, options.height)) < MIN_VISIBLE_SHARE * area(next)) break;
    if (options.othersAt(f).some((o) => iou(o, next) >= MAX_OTHER_IOU || intersection(o, next) >= MAX_OTHER_SHARE * Math.min(area(o), area(next)))) break;
    found.push({ frame: f, box: next });
    box = next;
    if (++sinceInit >= REINIT_EVERY) {
      kcf = new FaceKcf(pyramid, box);
      sinceInit = 0;
    }
  }
  return found.reverse();
}

/** Size ratio per frame between the first two detections, bounded to 1 -/+ `bound`. */
function growthPerFrame(track: Track, bound: number): number {
  const [a, b] = track.detections;
  if (!b || b.frame <= a.frame) return 1;
  const g = Math.pow(b.box.width / a.box.width, 1 / (b.frame - a.frame));
  return Math.min(1 + bound, Math.max(1 - bound, g));
}

/** Centre motion per frame between the first two detections. */
function velocityPerFrame(track: Track): { x: number; y: number } {
  const [a, b] = track.detections;
  if (!b || b.frame <= a.frame) return { x: 0, y: 0 };
  const ca = centre(a.box);
  const cb = centre(b.box);
  return { x: (cb.x - ca.x) / (b.frame - a.frame), y: (cb.y - ca.y) / (b.frame - a.frame) };
}

/** Whether the face in `box` (frame pixels) is dark, judged as the sightings judge it (run.ts): with its thumbnail margin. */
function isDark(pyramid: FramePyramid, box: Box): boolean {
  const { cols, rows } = pyramid.size(0);
  const r = thumbnailRect(box, cols, rows);
  if (r.width < 1 || r.height < 1) return false;
  const crop = pyramid.region(0, new cv.Rect(r.x, r.y, r.width, r.height));
  const dark = isDarkFace(crop);
  crop.release();
  return dark;
}
