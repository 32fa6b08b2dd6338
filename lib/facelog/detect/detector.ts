// The face log's first stage: faces in one decoded frame. The frame loop (analyse.ts) calls it
// every few frames, on the whole frame or only where something moved; the tracker follows the
// faces in between. Implementations: blazeface.ts (MediaPipe BlazeFace, its forward passes in
// onnxruntime or OpenCV DNN: tile-runtime.ts). Tests can plug in a fake that returns scripted
// faces.
import type cv from '../../video/opencv.js';
import type { DetectOptions, FaceDetection } from '../types.js';

export type { DetectOptions, FaceDetection };

/**
 * Faces narrower than minSize by more than this share are not reported: box widths vary ~10% per
 * frame, and a face of minSize must not come and go with them. The frame loop follows faces back
 * (track/backfill.ts) down to the same width.
 */
export const MIN_SIZE_SLACK = 0.1;

export interface FaceDetector {
  /**
   * Faces in `frame` (BGR, 8-bit, 3 channels) at least `options.minSize` pixels wide (with
   * MIN_SIZE_SLACK), best score first. Boxes and landmarks are in frame pixels.
   *
   * With `options.regions`, only faces overlapping a region are reported, and the work shrinks
   * with the regions (a person-sized region costs about two model runs, the whole 1080p frame at
   * min_size 30 seventeen); an empty list finds nothing. Synchronous and CPU-bound: it runs in a
   * worker process.
   */
  detect(frame: cv.Mat, options: DetectOptions): FaceDetection[];
  /**
   * The work detect() would do with `options` on a `width` x `height` frame, in runs of the
   * detector's largest model input (BlazeFace: 256 px tiles; smaller ones cost their area's
   * share). The scan schedule plans each run within a budget of it and shares a whole-frame
   * search out by it (scan-schedule.ts); the same options cost the same on every frame.
   */
  cost(width: number, height: number, options: DetectOptions): number;
  /** Model forward passes (tiles) the last detect() call ran, for detectors that work in tiles. */
  readonly lastTileCount?: number;
  /** Their cost in model runs of the largest tile (smaller tiles cost in proportion to their area). */
  readonly lastTileCost?: number;
}
