// Where something moved since the previous detector run, on a static camera: the detector only
// looks there (and around the faces already tracked), which is what makes 1080p affordable.
// Frames are compared at WORK_WIDTH in grey; changed pixels are grouped into boxes.
import cv from '../../video/opencv.js';
import type { Box } from '../types.js';
import type { MotionSource } from './motion-source.js';

/** Working width of the difference image: a 30 px face at 1080p is still 5 px wide here. */
const WORK_WIDTH = 320;
/** Grey-level change that counts as motion; H.264 noise on static backgrounds stays below ~8. */
const DIFF_THRESHOLD = 14;
/** Dilation (working pixels) that joins a walking person's changed pixels into one region. */
const DILATE_SIZE = 9;
/** Regions smaller than this share of the working image are noise (a face of 30 px at 1080p is ~0.0005). */
const MIN_REGION_SHARE = 0.0002;
/**
 * Regions with fewer changed pixels than this (before the dilation) are noise: at night the
 * camera's gain changes lone pixels all over the picture, and each would take a tile of the
 * detector's budget from the people. On the face-log night set's darkest videos (a third of the
 * day's light, noise sigma 8-14; seed 3, both sizes) 14.9 regions a detector run without this
 * floor and 7.0 with it, faces >= 30 px in a region 94.1% and 93.5%; the test set's dark video
 * (640x480, test/39) 78.5 and 17.9; its other nights and the day 4-6 regions either way (the
 * floor takes about one), every face in one.
 */
const MIN_CHANGED_PIXELS = 3;

export class MotionRegions implements MotionSource {
  private previous: cv.Mat | null = null;
  private readonly scale: number;
  private readonly kernel: cv.Mat;

  constructor(
    private readonly width: number,
    private readonly height: number,
  ) {
    this.scale = Math.min(1, WORK_WIDTH / width);
    this.kernel = cv.getStructuringElement(cv.MORPH_RECT, new cv.Size(DILATE_SIZE, DILATE_SIZE));
  }

  /** Boxes (full-frame pixels) where `grey` (a frame's luma) differs from the one given at the previous call. */
  update(grey: cv.Mat): Box[] {
    const small = grey.resize(Math.max(1, Math.round(this.height * this.scale)), Math.max(1, Math.round(this.width * this.scale)), 0, 0, cv.INTER_AREA);
    const previous = this.previous;
    this.previous = small;
    if (!previous) return [{ x: 0, y: 0, width: this.width, height: this.height }];
    const difference = small.absdiff(previous);
    const changed = difference.threshold(DIFF_THRESHOLD, 255, cv.THRESH_BINARY);
    const mask = changed.dilate(this.kernel);
    // freed now, not at the next garbage collection (see video/opencv-setup.ts)
    for (const m of [previous, difference]) m.release();
    const minArea = MIN_REGION_SHARE * mask.rows * mask.cols;
    const boxes: Box[] = [];
    for (const contour of mask.findContours(cv.RETR_EXTERNAL, cv.CHAIN_APPROX_SIMPLE)) {
      const r = contour.boundingRect();
      if (r.width * r.height < minArea || changed.getRegion(r).countNonZero() < MIN_CHANGED_PIXELS) continue;
      boxes.push({ x: r.x / this.scale, y: r.y / this.scale, width: r.width / this.scale, height: r.height / this.scale });
    }
    for (const m of [changed, mask]) m.release();
    return boxes;
  }
}
