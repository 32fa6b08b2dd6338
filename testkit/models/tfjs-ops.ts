// ONNX nodes that compute what the TensorFlow.js ops used by face-api compute, for a batch of one
// in NCHW layout. Shapes are tracked here because TensorFlow's 'same' padding depends on the input
// size (with stride 2 on an even size it pads one more at the end than at the start) and ONNX wants
// explicit pads; explicit pads also keep OpenCV from guessing.
import { attr, OnnxGraph } from './onnx-writer.js';
import type { WeightTensor } from './tfjs-weights.js';

/** A value in the graph: its name and [channels, height, width]. */
export interface Value {
  name: string;
  shape: [number, number, number];
}

export type Padding = 'same' | 'valid';

/** Output size and [begin, end] padding of a TensorFlow window op along one axis. */
export function tfWindow(size: number, kernel: number, stride: number, padding: Padding): { out: number; pads: [number, number] } {
  if (padding === 'valid') return { out: Math.ceil((size - kernel + 1) / stride), pads: [0, 0] };
  const out = Math.ceil(size / stride);
  const total = Math.max(0, (out - 1) * stride + kernel - size);
  const begin = Math.floor(total / 2);
  return { out, pads: [begin, total - begin] };
}

function windowAttributes(x: Value, kernel: number, stride: number, padding: Padding) {
  const h = tfWindow(x.shape[1], kernel, stride, padding);
  const w = tfWindow(x.shape[2], kernel, stride, padding);
  return {
    out: [h.out, w.out] as const,
    attributes: {
      kernel_shape: attr.ints([kernel, kernel]),
      strides: attr.ints([stride, stride]),
      // ONNX order: begin of each axis, then end of each axis.
      pads: attr.ints([h.pads[0], w.pads[0], h.pads[1], w.pads[1]]),
    },
  };
}

/** tf.conv2d (plus bias), filters already in ONNX layout [out, in/group, k, k]. */
export function conv2d(g: OnnxGraph, x: Value, filters: WeightTensor, bias: Float32Array | null, stride: number, padding: Padding, group = 1): Value {
  const [out, , kernel] = filters.shape;
  const { out: [h, w], attributes } = windowAttributes(x, kernel, stride, padding);
  const inputs = [x.name, g.floats('W', filters.shape, filters.data)];
  if (bias) inputs.push(g.floats('B', [out], bias));
  const name = g.node('Conv', inputs, { ...attributes, group: attr.int(group), dilations: attr.ints([1, 1]) });
  return { name, shape: [out, h, w] };
}

/** tf.maxPool: padded cells never win (ONNX pads MaxPool with -inf). */
export function maxPool(g: OnnxGraph, x: Value, kernel: number, stride: number, padding: Padding): Value {
  const { out: [h, w], attributes } = windowAttributes(x, kernel, stride, padding);
  return { name: g.node('MaxPool', [x.name], attributes), shape: [x.shape[0], h, w] };
}

/** tf.avgPool with 'valid' padding (the only kind face-api uses), rounding the output size down. */
export function avgPool(g: OnnxGraph, x: Value, kernel: number, stride: number): Value {
  const { out: [h, w], attributes } = windowAttributes(x, kernel, stride, 'valid');
  return { name: g.node('AveragePool', [x.name], attributes), shape: [x.shape[0], h, w] };
}

export function relu(g: OnnxGraph, x: Value): Value {
  return { name: g.node('Relu', [x.name]), shape: x.shape };
}

export function add(g: OnnxGraph, a: Value, b: Value): Value {
  if (a.shape.some((d, i) => d !== b.shape[i])) throw new Error(`Add of [${a.shape}] and [${b.shape}]`);
  return { name: g.node('Add', [a.name, b.name]), shape: a.shape };
}

/** Zeros appended after the channels, rows and columns (tf.concat with tf.zeros in face-api). */
export function padEnd(g: OnnxGraph, x: Value, channels: number, rows: number, cols: number): Value {
  if (channels === 0 && rows === 0 && cols === 0) return x;
  const pads = g.int64s('pads', [0, 0, 0, 0, 0, channels, rows, cols]);
  const name = g.node('Pad', [x.name, pads], { mode: attr.string('constant') });
  return { name, shape: [x.shape[0] + channels, x.shape[1] + rows, x.shape[2] + cols] };
}

/**
 * face-api's input normalisation, (rgb - mean) / divisor per channel, as a BatchNormalization
 * (variance 1, epsilon 0) so the model takes plain 0..255 RGB and OpenCV runs it as one scale layer.
 */
export function normalizeRgb(g: OnnxGraph, x: Value, mean: number[], divisor: number): Value {
  const c = x.shape[0];
  const inputs = [
    x.name,
    g.floats('norm_scale', [c], new Array(c).fill(1 / divisor)),
    g.floats('norm_bias', [c], new Array(c).fill(0)),
    g.floats('norm_mean', [c], mean),
    g.floats('norm_var', [c], new Array(c).fill(1)),
  ];
  return { name: g.node('BatchNormalization', inputs, { epsilon: attr.float(0) }), shape: x.shape };
}

/** Mean over all rows and columns, flattened to [1, channels]. */
export function globalMean(g: OnnxGraph, x: Value): string {
  const pooled = g.node('GlobalAveragePool', [x.name]);
  return g.node('Flatten', [pooled], { axis: attr.int(1) });
}

/** x · W + b for a [1, in] row, W in TensorFlow's [in, out] layout already transposed to [out, in]. */
export function dense(g: OnnxGraph, x: string, weightsOutIn: WeightTensor, bias: Float32Array, output?: string): string {
  const [out] = weightsOutIn.shape;
  if (bias.length !== out) throw new Error(`dense: ${bias.length} biases for ${out} outputs`);
  const inputs = [x, g.floats('fc_W', weightsOutIn.shape, weightsOutIn.data), g.floats('fc_B', [out], bias)];
  return g.node('Gemm', inputs, { transB: attr.int(1) }, output);
}
