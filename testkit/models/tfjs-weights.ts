// Reads a TensorFlow.js weights manifest (`*-weights_manifest.json` + its .bin shards) into named
// float32 tensors, as tf.io.decodeWeights does, without loading TensorFlow.js.
//
// face-api's models are stored quantized (uint8 with a per-tensor scale and min); dequantized
// values are what the original runs with, so the converted model starts from the same numbers.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface WeightTensor {
  shape: number[];
  data: Float32Array;
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: 'float32' | 'int32';
  quantization?: { dtype: 'uint8' | 'uint16' | 'float16'; scale?: number; min?: number };
}

interface WeightGroup {
  paths: string[];
  weights: WeightSpec[];
}

/** Loads every weight of `<dir>/<model>-weights_manifest.json`. */
export function readTfjsWeights(dir: string, model: string): Map<string, WeightTensor> {
  const manifest = JSON.parse(readFileSync(path.join(dir, `${model}-weights_manifest.json`), 'utf8')) as WeightGroup[];
  const weights = new Map<string, WeightTensor>();
  for (const group of manifest) {
    // A group's shards are one byte stream split into files.
    const bytes = Buffer.concat(group.paths.map((p) => readFileSync(path.join(dir, p))));
    let offset = 0;
    for (const spec of group.weights) {
      const count = spec.shape.reduce((a, b) => a * b, 1);
      const { data, byteLength } = decode(spec, bytes, offset, count);
      weights.set(spec.name, { shape: spec.shape, data });
      offset += byteLength;
    }
    if (offset !== bytes.length) throw new Error(`${model}: ${bytes.length - offset} bytes left after the last weight`);
  }
  return weights;
}

function decode(spec: WeightSpec, bytes: Buffer, offset: number, count: number): { data: Float32Array; byteLength: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
  const data = new Float32Array(count);
  const q = spec.quantization;
  if (!q) {
    for (let i = 0; i < count; i++) data[i] = spec.dtype === 'int32' ? view.getInt32(4 * i, true) : view.getFloat32(4 * i, true);
    return { data, byteLength: 4 * count };
  }
  if (q.dtype === 'float16') {
    for (let i = 0; i < count; i++) data[i] = halfToFloat(view.getUint16(2 * i, true));
    return { data, byteLength: 2 * count };
  }
  if (q.scale === undefined || q.min === undefined) throw new Error(`${spec.name}: ${q.dtype} quantization without scale/min`);
  // tfjs: value = quantized * scale + min, computed in double and stored as float32.
  const size = q.dtype === 'uint8' ? 1 : 2;
  for (let i = 0; i < count; i++) {
    const v = size === 1 ? view.getUint8(i) : view.getUint16(2 * i, true);
    data[i] = v * q.scale + q.min;
  }
  return { data, byteLength: size * count };
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** The named weight; throws when missing or of another shape than expected. */
export function weight(weights: Map<string, WeightTensor>, name: string, shape?: number[]): WeightTensor {
  const w = weights.get(name);
  if (!w) throw new Error(`weight ${name} is missing`);
  if (shape && (w.shape.length !== shape.length || w.shape.some((d, i) => d !== shape[i]))) {
    throw new Error(`weight ${name} has shape [${w.shape}], expected [${shape}]`);
  }
  return w;
}

/** TensorFlow's conv filter layout [kh, kw, in, out] to ONNX's [out, in, kh, kw]. */
export function hwioToOihw(w: WeightTensor): WeightTensor {
  const [kh, kw, cin, cout] = w.shape;
  const out = new Float32Array(w.data.length);
  for (let y = 0; y < kh; y++)
    for (let x = 0; x < kw; x++)
      for (let i = 0; i < cin; i++)
        for (let o = 0; o < cout; o++) out[((o * cin + i) * kh + y) * kw + x] = w.data[((y * kw + x) * cin + i) * cout + o];
  return { shape: [cout, cin, kh, kw], data: out };
}

/** TensorFlow's depthwise filter [kh, kw, channels, 1] to ONNX's grouped conv [channels, 1, kh, kw]. */
export function depthwiseToOihw(w: WeightTensor): WeightTensor {
  const [kh, kw, channels, multiplier] = w.shape;
  if (multiplier !== 1) throw new Error(`depthwise multiplier ${multiplier} is not supported`);
  return hwioToOihw({ shape: [kh, kw, 1, channels], data: w.data });
}

/** A [in, out] matrix (x · W) as Gemm's transposed B [out, in]. */
export function transpose2d(w: WeightTensor): WeightTensor {
  const [rows, cols] = w.shape;
  const out = new Float32Array(w.data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = w.data[r * cols + c];
  return { shape: [cols, rows], data: out };
}
