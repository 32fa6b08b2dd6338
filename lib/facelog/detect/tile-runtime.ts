// What BlazeFace's two runtimes share: a tile model turns one square BGR tile of the model's input
// size into raw faces, whatever runs the network. blazeface.ts cuts the frame into tiles and
// merges their faces; blazeface-opencv.ts and blazeface-onnxruntime.ts run the forward pass.
//
// Measured with the prepared 256 model, 100 forwards of one input in one process on this 2-core
// machine, quiet: onnxruntime 6.9 ms on 1 thread and 3.9 ms on 2, OpenCV 4.6 DNN 17.4 and 11.0 ms;
// with the machine busy (load 3.4) onnxruntime 18.3 ms on 1 thread, 23.3 on 2, OpenCV 39 on
// either, and at 128 px 4.3 against 13.3 ms; onnxruntime on 1 thread at load 1.5: 7.4 ms at 256,
// 1.8 ms at 128. In both a pass costs about its input's area (tiles.ts, tileCost: onnxruntime's
// 128 pass is 0.23-0.24 of its 256 pass), so the scan schedule's budgets hold for either.
// onnxruntime runs the widened files (model-sizes.ts, blazeFaceWideModelFile): 4.9 ms at 256 and
// 1.2 ms at 128 (against 8.0 and 1.9 for the narrow files, the same minutes, quiet).
import cv from '../../video/opencv.js';
import { decodeFaces, REGRESSOR_VALUES, type RawFace } from './decode.js';
import type { Anchor } from './anchors.js';

/**
 * Smallest score (after the sigmoid) reported, MediaPipe's own threshold for this model. Measured:
 * at 0.5, 91% of 137 real faces 16 px wide in the model are found (0.6: 84%, 0.7: 58%); on 259
 * tiles of face-free scenes (vtest.avi frames at 640x480 and 1080p, 21 OpenCV sample images, both
 * min_size 30 and 60) 7 detections reach 0.5: 2 real faces and 2 backs of heads among them, then
 * a squirrel (0.70), a baboon's eye (0.61) and a drawn face (0.56).
 */
export const MIN_SCORE = 0.5;

/**
 * The model's outputs, in anchor order within each pair: logits of the stride-16 and stride-32
 * anchors ([1,512,1], [1,384,1]), then their regressors ([1,512,16], [1,384,16]).
 */
export const BLAZEFACE_OUTPUTS = ['Identity:0', 'Identity_1:0', 'Identity_2:0', 'Identity_3:0'];

/** The runtimes a tile model can run in (`FACE_DETECTOR_RUNTIME`, lib/config.ts). */
export {
  FACE_DETECTOR_RUNTIMES as DETECTOR_RUNTIMES,
  DEFAULT_FACE_DETECTOR_RUNTIME as DEFAULT_DETECTOR_RUNTIME,
  type FaceDetectorRuntime as DetectorRuntime,
} from '../../config.js';

/** Faces (model-input pixels) that BlazeFace finds in one square BGR tile of its input size. */
export type TileModel = (tile: cv.Mat) => RawFace[];

/** BlazeFace's four outputs (BLAZEFACE_OUTPUTS order) as faces scoring at least `minScore`. */
export function decodeOutputs([logits16, logits32, boxes16, boxes32]: Float32Array[], anchors: Anchor[], minScore: number): RawFace[] {
  const logits = new Float32Array(logits16.length + logits32.length);
  logits.set(logits16);
  logits.set(logits32, logits16.length);
  const regressors = new Float32Array(boxes16.length + boxes32.length);
  regressors.set(boxes16);
  regressors.set(boxes32, boxes16.length);
  return decodeFaces(logits, regressors, anchors, minScore);
}

/**
 * Throws unless BlazeFace's output shapes (BLAZEFACE_OUTPUTS order, `file`'s) match the anchors
 * (896 for the 256 model): every box would be wrong.
 */
export function checkOutputShapes(file: string, [logits16, logits32, boxes16, boxes32]: readonly (readonly number[])[], anchors: number): void {
  const ok =
    logits16[1] + logits32[1] === anchors &&
    boxes16[1] === logits16[1] &&
    boxes32[1] === logits32[1] &&
    boxes16[2] === REGRESSOR_VALUES &&
    boxes32[2] === REGRESSOR_VALUES;
  if (!ok) {
    const shapes = [logits16, logits32, boxes16, boxes32].map((s) => s.join('x')).join(', ');
    throw new Error(`${file}: outputs ${shapes} do not match ${anchors} anchors x ${REGRESSOR_VALUES} values`);
  }
}

/** A BGR tile as the model's input: NCHW, RGB, (v - 127.5) / 127.5. */
export function inputBlob(tile: cv.Mat, size: number): cv.Mat {
  return cv.blobFromImage(tile, 1 / 127.5, new cv.Size(size, size), new cv.Vec3(127.5, 127.5, 127.5), true, false);
}
