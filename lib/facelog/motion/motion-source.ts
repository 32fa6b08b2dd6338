// The face log's motion stage: where something moved in the frame since the previous detector
// run. The detector looks only there (and around the faces already tracked), which is what makes
// 1080p affordable. Implementation: motion-regions.ts (frame differencing, for a static camera).
// Tests can plug in a fake that returns scripted regions.
import type cv from '../../video/opencv.js';
import type { Box } from '../types.js';

export interface MotionSource {
  /**
   * Boxes (frame pixels) where `grey`, the luma of the frame the detector is about to run on,
   * differs from the one given at the previous call. The first call has nothing to compare with
   * and returns the whole frame. Called once per detector run, frames in order.
   *
   * A face missing from every box is not looked for at that run (unless it is tracked) until the
   * scan schedule's rotating share of the whole frame reaches it, seconds later: a box should
   * cover a moving person's head, and may leave out changes too small to hold a face.
   */
  update(grey: cv.Mat): Box[];
}
