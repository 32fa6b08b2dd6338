// One KCF correlation tracker following one face between detector runs.
//
// KCF's cost grows with the face's size, and with the image it is given: OpenCV's KCF halves the
// whole image when the face's search window is large. Measured on this appliance (OpenCV 4.6):
// 10 ms per update for a 60 px box and 36 ms for a 200 px one with the defaults on a full frame.
// So it runs on the level of an image pyramid where the face is at most TRACKING_WIDTH wide, on a
// fixed window around the face (WINDOW_MARGIN face sizes on each side, re-made at every detector
// run, which re-initialises the tracker), with a smaller `max_patch_size` (MAX_PATCH_AREA).
import cv from '../../video/opencv.js';
import type { Box } from '../types.js';
import type { YuvFrame } from '../../video/yuv-frame.js';
import { clip, expand, round, scale } from '../geometry.js';

/** Widest face, in pixels of its pyramid level, that KCF tracks without going down a level. */
const TRACKING_WIDTH = 48;
/**
 * The window around the face KCF sees, in face sizes on each side: between two detector runs
 * (a sixth of a second) a walking face moves well under one face width.
 */
const WINDOW_MARGIN = 1.5;
/** Deepest pyramid level (1/8 of the frame). */
const MAX_LEVEL = 3;
/**
 * KCF's patch area limit: OpenCV's KCF works at half resolution on a face whose box is larger
 * (default 80x80). An update's cost grows with the square of the box until it halves: measured in
 * node on vtest.avi windows (one thread), with 40x40 0.07 ms for a 10 px box, 0.5 at 20,
 * 1.1 at 32, 3.1 at 40, then 0.7 at 42-48; with 20x20 every box of a level (24-48 px) is halved.
 * In the face log on a 720p bench video: 1.8 ms per update with 40x40. Bench (seed 2, 720p): faces
 * in a track 98.8% with 40x40, 99.0% with 20x20, 70 and 74 fps.
 */
const MAX_PATCH_AREA = 20 * 20;

/**
 * A frame and its half, quarter and eighth size versions. Only the windows the trackers look at
 * are made, in BGR, from the decoded I420 frame.
 */
export class FramePyramid {
  constructor(readonly frame: YuvFrame) {}

  /** Size of level k (level 0 is the frame). */
  size(k: number): { cols: number; rows: number } {
    let cols = this.frame.width;
    let rows = this.frame.height;
    for (let i = 0; i < k; i++) {
      cols = Math.max(1, Math.round(cols / 2));
      rows = Math.max(1, Math.round(rows / 2));
    }
    return { cols, rows };
  }

  /** Rectangle `r` (level pixels, inside the level) of level k, in BGR. */
  region(k: number, r: cv.Rect): cv.Mat {
    const f = 2 ** k;
    const x = Math.min(this.frame.width - 1, r.x * f);
    const y = Math.min(this.frame.height - 1, r.y * f);
    const w = Math.max(1, Math.min(this.frame.width - x, r.width * f));
    const h = Math.max(1, Math.min(this.frame.height - y, r.height * f));
    return this.frame.bgrRegion(x, y, w, h, r.width, r.height);
  }
}

export function pyramidLevelFor(box: Box): number {
  let k = 0;
  while (k < MAX_LEVEL && box.width / 2 ** k > TRACKING_WIDTH) k++;
  return k;
}

export class FaceKcf {
  private readonly tracker: cv.TrackerKCF;
  private readonly level: number;
  /** The window KCF sees, in level pixels: fixed from init to the next re-init. */
  private readonly window: cv.Rect;

  constructor(pyramid: FramePyramid, box: Box) {
    const params = new cv.TrackerKCFParams();
    // The typings call the fields readonly; the binding reads them when the tracker is made.
    (params as unknown as { max_patch_size: number }).max_patch_size = MAX_PATCH_AREA;
    this.tracker = new cv.TrackerKCF(params);
    this.level = pyramidLevelFor(box);
    const image = pyramid.size(this.level);
    const levelBox = scale(box, 1 / 2 ** this.level);
    const w = round(clip(expand(levelBox, WINDOW_MARGIN, image.cols, image.rows), image.cols, image.rows));
    this.window = new cv.Rect(w.x, w.y, Math.max(4, w.width), Math.max(4, w.height));
    const r = round(clip(levelBox, image.cols, image.rows));
    const crop = this.crop(pyramid);
    this.tracker.init(crop, new cv.Rect(r.x - w.x, r.y - w.y, Math.max(2, r.width), Math.max(2, r.height)));
    crop.release();
  }

  /** The face's box in this frame, or null when KCF lost it. */
  update(pyramid: FramePyramid): Box | null {
    let rect: cv.Rect | null;
    const crop = this.crop(pyramid);
    try {
      rect = this.tracker.update(crop);
    } catch {
      return null; // KCF throws when the box has left the window
    } finally {
      // KCF keeps its own copy of what it learns: the window is freed now (see video/opencv-setup.ts)
      crop.release();
    }
    if (!rect || rect.width <= 0 || rect.height <= 0) return null;
    return scale({ x: rect.x + this.window.x, y: rect.y + this.window.y, width: rect.width, height: rect.height }, 2 ** this.level);
  }

  private crop(pyramid: FramePyramid): cv.Mat {
    const image = pyramid.size(this.level);
    const x = Math.min(this.window.x, Math.max(0, image.cols - this.window.width));
    const y = Math.min(this.window.y, Math.max(0, image.rows - this.window.height));
    return pyramid.region(this.level, new cv.Rect(x, y, Math.min(this.window.width, image.cols), Math.min(this.window.height, image.rows)));
  }
}
