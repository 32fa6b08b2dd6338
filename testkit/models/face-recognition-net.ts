// face-api's FaceRecognitionNet (a ResNet-34-like net after dlib's face descriptor, 128-d output)
// as ONNX, built layer by layer from its TensorFlow.js weights following
// @vladmandic/face-api/src/faceRecognitionNet/ (FaceRecognitionNet.ts, residualLayer.ts).
//
// Input `rgb`: [1, 3, 150, 150], R-G-B planes of 0..255 (cv.blobFromImage(crop, 1, 150x150, 0,
// swapRB=true)); the mean subtraction and /255 of the original are inside the model.
// Output `descriptor`: [1, 128], compared by Euclidean distance.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { OnnxGraph } from './onnx-writer.js';
import { add, avgPool, conv2d, dense, globalMean, maxPool, normalizeRgb, padEnd, relu, type Value } from './tfjs-ops.js';
import { hwioToOihw, readTfjsWeights, transpose2d, weight, type WeightTensor } from './tfjs-weights.js';
import { FACE_API_MODEL_DIR, faceApiSource } from './face-api-package.js';

export const FACE_DESCRIPTOR_FILE = 'face-descriptor.onnx';
export const FACE_DESCRIPTOR_INPUT_SIZE = 150;
/** face-api's normalize(): per-channel means of its training images, then / 255. */
const MEAN_RGB = [122.782, 117.001, 104.298];
const MODEL = 'face_recognition_model';

export function buildFaceRecognitionNet(weights: Map<string, WeightTensor>): OnnxGraph {
  const g = new OnnxGraph('face_recognition_net');
  const size = FACE_DESCRIPTOR_INPUT_SIZE;
  let x: Value = { name: g.input('rgb', [1, 3, size, size]), shape: [3, size, size] };
  x = normalizeRgb(g, x, MEAN_RGB, 255);

  const convLayer = (input: Value, prefix: string, stride: number, padding: 'same' | 'valid', withRelu: boolean) => {
    const out = conv2d(g, input, ...scaledConv(weights, prefix), stride, padding);
    return withRelu ? relu(g, out) : out;
  };
  const residual = (input: Value, prefix: string) => {
    const out = convLayer(convLayer(input, `${prefix}/conv1`, 1, 'same', true), `${prefix}/conv2`, 1, 'same', false);
    return relu(g, add(g, out, input));
  };
  // residualDown: a stride-2 branch added to the 2x2-average-pooled input, which is zero-padded to
  // the branch's channels; when the branch comes out one row and column smaller (odd input sizes),
  // face-api appends a zero row and column to it.
  const residualDown = (input: Value, prefix: string) => {
    let out = convLayer(convLayer(input, `${prefix}/conv1`, 2, 'valid', true), `${prefix}/conv2`, 1, 'same', false);
    let pooled = avgPool(g, input, 2, 2);
    out = padEnd(g, out, 0, pooled.shape[1] - out.shape[1], pooled.shape[2] - out.shape[2]);
    pooled = padEnd(g, pooled, out.shape[0] - pooled.shape[0], 0, 0);
    return relu(g, add(g, pooled, out));
  };

  x = convLayer(x, 'conv32_down', 2, 'valid', true);
  x = maxPool(g, x, 3, 2, 'valid');
  for (const block of ['conv32_1', 'conv32_2', 'conv32_3']) x = residual(x, block);
  x = residualDown(x, 'conv64_down');
  for (const block of ['conv64_1', 'conv64_2', 'conv64_3']) x = residual(x, block);
  x = residualDown(x, 'conv128_down');
  for (const block of ['conv128_1', 'conv128_2']) x = residual(x, block);
  x = residualDown(x, 'conv256_down');
  for (const block of ['conv256_1', 'conv256_2']) x = residual(x, block);
  x = residualDown(x, 'conv256_down_out');

  const fc = weight(weights, 'fc', [256, 128]);
  dense(g, globalMean(g, x), transpose2d(fc), new Float32Array(128), 'descriptor');
  g.output('descriptor', [1, 128]);
  return g;
}

/**
 * A conv followed by face-api's scale layer (x * weights + biases per channel), folded into one
 * conv: W' = W * s, b' = b * s + t. Exact up to float rounding.
 */
function scaledConv(weights: Map<string, WeightTensor>, prefix: string): [WeightTensor, Float32Array] {
  const filters = hwioToOihw(weight(weights, `${prefix}/conv/filters`));
  const bias = weight(weights, `${prefix}/conv/bias`).data;
  const s = weight(weights, `${prefix}/scale/weights`).data;
  const t = weight(weights, `${prefix}/scale/biases`).data;
  const out = filters.shape[0];
  const perFilter = filters.data.length / out;
  const scaled = new Float32Array(filters.data.length);
  for (let o = 0; o < out; o++) for (let i = 0; i < perFilter; i++) scaled[o * perFilter + i] = filters.data[o * perFilter + i] * s[o];
  const b = new Float32Array(out);
  for (let o = 0; o < out; o++) b[o] = bias[o] * s[o] + t[o];
  return [{ shape: filters.shape, data: scaled }, b];
}

/** Writes FACE_DESCRIPTOR_FILE into outDir. */
export function convertFaceRecognitionNet(outDir: string): { file: string; source: string } {
  const graph = buildFaceRecognitionNet(readTfjsWeights(FACE_API_MODEL_DIR, MODEL));
  writeFileSync(path.join(outDir, FACE_DESCRIPTOR_FILE), graph.encode());
  return { file: FACE_DESCRIPTOR_FILE, source: faceApiSource(MODEL) };
}
