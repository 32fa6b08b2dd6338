// face-api's AgeGenderNet (a TinyXception with two main blocks, then age regression and a 2-way
// gender softmax) as ONNX, from its TensorFlow.js weights following
// @vladmandic/face-api/src/xception/TinyXception.ts and src/ageGenderNet/AgeGenderNet.ts.
//
// Input `rgb`: [1, 3, 112, 112], R-G-B planes of 0..255; normalisation is inside the model.
// Outputs: `gender` [1, 2] softmax with index 0 = male (face-api reads probMale = gender[0]),
// `age` [1, 1] in years.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { OnnxGraph } from './onnx-writer.js';
import { add, conv2d, dense, globalMean, maxPool, normalizeRgb, relu, type Value } from './tfjs-ops.js';
import { depthwiseToOihw, hwioToOihw, readTfjsWeights, transpose2d, weight, type WeightTensor } from './tfjs-weights.js';
import { FACE_API_MODEL_DIR, faceApiSource } from './face-api-package.js';

export const GENDER_FILE = 'gender.onnx';
export const GENDER_INPUT_SIZE = 112;
const MEAN_RGB = [122.782, 117.001, 104.298];
const MODEL = 'age_gender_model';
const MAIN_BLOCKS = 2;

export function buildAgeGenderNet(weights: Map<string, WeightTensor>): OnnxGraph {
  const g = new OnnxGraph('age_gender_net');
  const size = GENDER_INPUT_SIZE;
  let x: Value = { name: g.input('rgb', [1, 3, size, size]), shape: [3, size, size] };
  x = normalizeRgb(g, x, MEAN_RGB, 255);

  const conv = (input: Value, prefix: string, stride: number) =>
    conv2d(g, input, hwioToOihw(weight(weights, `${prefix}/filters`)), weight(weights, `${prefix}/bias`).data, stride, 'same');
  // tf.separableConv2d: a depthwise 3x3 (a grouped conv, one group per channel), then a pointwise 1x1
  // that carries the bias.
  const separable = (input: Value, prefix: string) => {
    const depthwise = depthwiseToOihw(weight(weights, `${prefix}/depthwise_filter`));
    const dw = conv2d(g, input, depthwise, null, 1, 'same', input.shape[0]);
    return conv2d(g, dw, hwioToOihw(weight(weights, `${prefix}/pointwise_filter`)), weight(weights, `${prefix}/bias`).data, 1, 'same');
  };
  const reductionBlock = (input: Value, prefix: string, activateInput: boolean) => {
    let out = activateInput ? relu(g, input) : input;
    out = separable(out, `${prefix}/separable_conv0`);
    out = separable(relu(g, out), `${prefix}/separable_conv1`);
    out = maxPool(g, out, 3, 2, 'same');
    return add(g, out, conv(input, `${prefix}/expansion_conv`, 2));
  };
  const mainBlock = (input: Value, prefix: string) => {
    let out = separable(relu(g, input), `${prefix}/separable_conv0`);
    out = separable(relu(g, out), `${prefix}/separable_conv1`);
    out = separable(relu(g, out), `${prefix}/separable_conv2`);
    return add(g, out, input);
  };

  x = relu(g, conv(x, 'entry_flow/conv_in', 2));
  x = reductionBlock(x, 'entry_flow/reduction_block_0', false);
  x = reductionBlock(x, 'entry_flow/reduction_block_1', true);
  for (let i = 0; i < MAIN_BLOCKS; i++) x = mainBlock(x, `middle_flow/main_block_${i}`);
  x = reductionBlock(x, 'exit_flow/reduction_block', true);
  x = relu(g, separable(x, 'exit_flow/separable_conv'));

  // face-api: avgPool 7x7 with stride 2, 'valid', on the 7x7 features: one window, the global mean.
  if (x.shape[1] !== 7 || x.shape[2] !== 7) throw new Error(`age/gender features are ${x.shape[1]}x${x.shape[2]}, expected 7x7`);
  const pooled = globalMean(g, x);
  const fc = (name: string, outputs: number) =>
    [transpose2d(weight(weights, `fc/${name}/weights`, [512, outputs])), weight(weights, `fc/${name}/bias`, [outputs]).data] as const;
  dense(g, pooled, ...fc('age', 1), 'age');
  const logits = dense(g, pooled, ...fc('gender', 2));
  g.node('Softmax', [logits], {}, 'gender');
  g.output('gender', [1, 2]);
  g.output('age', [1, 1]);
  return g;
}

/** Writes GENDER_FILE into outDir. */
export function convertAgeGenderNet(outDir: string): { file: string; source: string } {
  const graph = buildAgeGenderNet(readTfjsWeights(FACE_API_MODEL_DIR, MODEL));
  writeFileSync(path.join(outDir, GENDER_FILE), graph.encode());
  return { file: GENDER_FILE, source: faceApiSource(MODEL) };
}
