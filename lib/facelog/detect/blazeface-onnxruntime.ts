// BlazeFace's forward pass in onnxruntime (CPU): the network of blazeface-opencv.ts, widened for
// onnxruntime's blocked layout (model-sizes.ts, blazeFaceWideModelFile), in under a third of
// OpenCV DNN's time (tile-runtime.ts), run synchronously (onnxruntime-session.ts).
import path from 'node:path';
import { loadOnnxNet, type OnnxNet } from '../onnxruntime-session.js';
import { generateAnchors } from './anchors.js';
import { blazeFaceWideModelFile } from './model-sizes.js';
import { REGRESSOR_VALUES } from './decode.js';
import { readFloats } from '../mat-floats.js';
import { BLAZEFACE_OUTPUTS, decodeOutputs, inputBlob, MIN_SCORE, type TileModel } from './tile-runtime.js';
import type { TileSize } from './tiles.js';

/** The model for `size` x `size` tiles (model-sizes.ts) in onnxruntime, reporting faces that score at least `minScore`. */
export function loadOnnxRuntimeTileModel(modelDir: string, size: TileSize, minScore = MIN_SCORE): TileModel {
  const net = loadOnnxNet(path.join(modelDir, blazeFaceWideModelFile(size)));
  const anchors = generateAnchors(size);
  checkShapes(net, size, anchors.length);
  return (tile) => decodeOutputs(net.run(readFloats(inputBlob(tile, size), 3 * size, size), BLAZEFACE_OUTPUTS), anchors, minScore);
}

/** The model's input must be one size x size tile and its outputs match the anchors (896 for the 256 model), or every box is wrong. */
function checkShapes(net: OnnxNet, size: TileSize, anchors: number): void {
  const outputs = BLAZEFACE_OUTPUTS.map((name) => net.outputShape(name) ?? []);
  const [logits16, logits32, boxes16, boxes32] = outputs;
  const ok =
    net.input.shape.join('x') === `1x3x${size}x${size}` &&
    logits16[1] + logits32[1] === anchors &&
    boxes16[1] === logits16[1] &&
    boxes32[1] === logits32[1] &&
    boxes16[2] === REGRESSOR_VALUES &&
    boxes32[2] === REGRESSOR_VALUES;
  if (!ok) {
    const shapes = outputs.map((s) => s.join('x')).join(', ');
    throw new Error(`${blazeFaceWideModelFile(size)}: input ${net.input.shape.join('x')} and outputs ${shapes} do not match 1x3x${size}x${size} and ${anchors} anchors x ${REGRESSOR_VALUES} values`);
  }
}
