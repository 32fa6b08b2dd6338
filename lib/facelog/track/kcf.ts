// One KCF correlation tracker following one face between detector runs.
//
// KCF's cost grows with the face's size: 10 ms per update for a 60 px box and 36 ms for a 200 px
// one with OpenCV 4.6's defaults on this appliance, measured on vtest.avi. It runs instead on a
// level of an image pyramid where the face is at most TRACKING_WIDTH wide, with a smaller
// `max_patch_size`: 2.7 ms per update for 30-60 px boxes.
import cv from '../../video/opencv.js';
import type { Box } from '../types.js';
import { clip, round, scale } from '../geometry.js';

/** Widest face, in pixels of its pyramid level, that KCF tracks without going down a level. */
const TRACKING_WIDTH = 64;
/** Deepest pyramid level (1/8 of the frame). */
const MAX_LEVEL = 3;
/** KCF's patch area limit: 40x40 halves larger search windows (OpenCV's default is 80x80). */
const MAX_PATCH_AREA = 40 * 40;

/** A frame and its half, quarter and eighth size versions, made on first use. */
export class FramePyramid {
  private readonly levels: cv.Mat[];

  constructor(readonly frame: cv.Mat) {
    this.levels = [frame];
  }

  level(k: number): cv.Mat {
    while (this.levels.length <= k) {
      const prev = this.levels[this.levels.length - 1];
      this.levels.push(prev.resize(Math.max(1, Math.round(prev.rows / 2)), Math.max(1, Math.round(prev.cols / 2)), 0, 0, cv.INTER_AREA));
    }
    return this.levels[k];
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

  constructor(pyramid: FramePyramid, box: Box) {
    const params = new cv.TrackerKCFParams();
    // The typings call the fields readonly; the binding reads them when the tracker is made.
    (params as unknown as { max_patch_size: number }).max_patch_size = MAX_PATCH_AREA;
    this.tracker = new cv.TrackerKCF(params);
    this.level = pyramidLevelFor(box);
    const image = pyramid.level(this.level);
    const r = round(clip(scale(box, 1 / 2 ** this.level), image.cols, image.rows));
    this.tracker.init(image, new cv.Rect(r.x, r.y, Math.max(2, r.width), Math.max(2, r.height)));
  }

  /** The face's box in this frame, or null when KCF lost it. */
  update(pyramid: FramePyramid): Box | null {
    let rect: cv.Rect | null;
    try {
      rect = this.tracker.update(pyramid.level(this.level));
    } catch {
      return null; // KCF throws when the box has left the image
    }
    if (!rect || rect.width <= 0 || rect.height <= 0) return null;
    return scale({ x: rect.x, y: rect.y, width: rect.width, height: rect.height }, 2 ** this.level);
  }
}
