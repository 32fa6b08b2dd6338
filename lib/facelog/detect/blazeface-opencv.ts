// BlazeFace's forward pass in OpenCV DNN: one tile of the model's input size to raw faces. The
// runtime the project's design names; blazeface-onnxruntime.ts runs the same network faster
// (tile-runtime.ts says by how much).
import path from 'node:path';
import cv, { withThreads } from '../../video/opencv.js';
import { generateAnchors } from './anchors.js';
import { blazeFaceModelFile } from './model-sizes.js';
import { REGRESSOR_VALUES } from './decode.js';
import { BLAZEFACE_OUTPUTS, checkOutputShapes, decodeOutputs, inputBlob, MIN_SCORE, type TileModel } from './tile-runtime.js';
import { readFloats } from '../mat-floats.js';
import type { TileSize } from './tiles.js';

/**
 * OpenCV threads of a forward pass. The worker's own thread is the face log's critical path (the
 * ffmpeg decoder and encoder run beside it), and forward passes are half of its work: two
 * threads take a quarter to a third off a pass (the times by tile side: tiles.ts, tileCost), and
 * with them a 720p bench video's face log runs 8% faster than with one (64 against 59 fps;
 * `node build/scripts/bench-facelog.js`).
 */
const FORWARD_THREADS = 2;

/** The model for `size` x `size` tiles (model-sizes.ts) in OpenCV DNN, reporting faces that score at least `minScore`. */
export function loadOpenCvTileModel(modelDir: string, size: TileSize, minScore = MIN_SCORE): TileModel {
  const net = cv.readNetFromONNX(path.join(modelDir, blazeFaceModelFile(size)));
  const anchors = generateAnchors(size);
  // A pass on a black tile shows the outputs' shapes.
  net.setInput(inputBlob(new cv.Mat(size, size, cv.CV_8UC3, [0, 0, 0]), size));
  checkOutputShapes(blazeFaceModelFile(size), net.forward(BLAZEFACE_OUTPUTS).map((m) => m.sizes), anchors.length);
  return (tile) => {
    net.setInput(inputBlob(tile, size));
    const [logits16, logits32, boxes16, boxes32] = withThreads(FORWARD_THREADS, () => net.forward(BLAZEFACE_OUTPUTS));
    const n16 = logits16.sizes[1];
    const n32 = logits32.sizes[1];
    const outputs = [readFloats(logits16, 1, n16), readFloats(logits32, 1, n32), readFloats(boxes16, n16, REGRESSOR_VALUES), readFloats(boxes32, n32, REGRESSOR_VALUES)];
    return decodeOutputs(outputs, anchors, minScore);
  };
}
