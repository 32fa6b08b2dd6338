// BlazeFace's forward pass in onnxruntime (CPU): the network of blazeface-opencv.ts, widened for
// onnxruntime's blocked layout (model-sizes.ts, blazeFaceWideModelFile), in under a third of
// OpenCV DNN's time (tile-runtime.ts), run synchronously (onnxruntime-session.ts).
import path from 'node:path';
import { loadOnnxNet } from '../onnxruntime-session.js';
import { generateAnchors } from './anchors.js';
import { blazeFaceWideModelFile } from './model-sizes.js';
import { BLAZEFACE_OUTPUTS, checkOutputShapes, decodeOutputs, inputBlob, MIN_SCORE, type TileModel } from './tile-runtime.js';
import type { TileSize } from './tiles.js';

/** The model for `size` x `size` tiles (model-sizes.ts) in onnxruntime, reporting faces that score at least `minScore`. */
export function loadOnnxRuntimeTileModel(modelDir: string, size: TileSize, minScore = MIN_SCORE): TileModel {
  const file = blazeFaceWideModelFile(size);
  const net = loadOnnxNet(path.join(modelDir, file));
  const anchors = generateAnchors(size);
  if (net.input.shape.join('x') !== `1x3x${size}x${size}`) throw new Error(`${file}: input ${net.input.shape.join('x')}, not 1x3x${size}x${size}`);
  checkOutputShapes(file, BLAZEFACE_OUTPUTS.map((name) => net.outputShape(name) ?? []), anchors.length);
  return (tile) => {
    const blob = inputBlob(tile, size);
    const outputs = net.run(blob, BLAZEFACE_OUTPUTS);
    blob.release(); // its floats are copied into the input tensor; see blazeface.ts on tiles
    return decodeOutputs(outputs, anchors, minScore);
  };
}
