// BlazeFace for the detector's tiles: the same weights and graph, with the three kinds of shape
// that the package's ONNX fixes for a 1x256x256x3 input rewritten for another side, and its first
// node (a Transpose from NHWC, TensorFlow's layout) dropped so that the input is NCHW, what
// OpenCV's blobFromImage makes natively from a tile (no copy of the tile through JavaScript).
// The network is fully convolutional; only these fix the size:
// - the graph input's declared dims;
// - ConstantOfShape shapes (the zero channels a residual block pads its shortcut with,
//   [1, C, 32, 32] and [1, 48, 16, 16]): scaled with the input;
// - Reshape targets ([1, 512, 1] ... [1, 384, 16]): the anchor count becomes -1 (inferred).
// The declared output dims are rewritten to match, and the per-tensor shapes of `value_info`
// (optional in ONNX) are dropped. A smaller input costs in proportion to its area (measured in
// OpenCV 4.6, one thread: 25 ms at 256, 13.5 at 192, 6 at 128), so a small region of the frame
// need not pay for a whole 256 tile.
import { editMessages, messages, readFields, stringOf, stringsOf, writeFields, type ProtoField } from './proto-fields.js';
import {
  MODEL_GRAPH,
  GRAPH_NODE,
  GRAPH_INITIALIZER,
  GRAPH_INPUT,
  GRAPH_OUTPUT,
  GRAPH_VALUE_INFO,
  NODE_INPUT,
  NODE_OUTPUT,
  NODE_OP_TYPE,
  TENSOR_DIMS,
  TENSOR_DATA_TYPE,
  TENSOR_INT64_DATA,
  TENSOR_NAME,
  TENSOR_RAW_DATA,
  VALUE_INFO_NAME,
  VALUE_INFO_TYPE,
  TYPE_TENSOR,
  TENSOR_TYPE_SHAPE,
  SHAPE_DIM,
  DIM_VALUE,
  INT64,
} from './onnx-fields.js';

/** The package model's input side. */
export const SOURCE_SIZE = 256;
/** The coarsest feature map's stride: the input side must be a multiple of it. */
const MAX_STRIDE = 32;

/** The package's BlazeFace ONNX (`model`, NHWC 1x256x256x3 input) rewritten for an NCHW 1x3x`size`x`size` input. */
export function rewriteBlazeFace(model: Uint8Array, size: number): Uint8Array {
  if (!(Number.isInteger(size) && size > 0 && size % MAX_STRIDE === 0)) throw new Error(`BlazeFace input side ${size} is not a multiple of ${MAX_STRIDE}`);
  const ratio = size / SOURCE_SIZE;
  const fields = readFields(model);
  const graph = readFields(one(messages(fields, MODEL_GRAPH), 'graph'));
  // Each node's fields, and its bytes in the graph (to drop it by identity).
  const nodes = messages(graph, GRAPH_NODE).map((bytes) => Object.assign(readFields(bytes), { bytes }));
  const inputsOf = (op: string) => nodes.filter((n) => stringOf(n, NODE_OP_TYPE) === op).map((n) => stringsOf(n, NODE_INPUT));
  const padShapes = new Set(inputsOf('ConstantOfShape').map((i) => i[0]));
  const reshapeTargets = new Set(inputsOf('Reshape').map((i) => i[1]));
  if (padShapes.size !== 2 || reshapeTargets.size !== 4) throw new Error(`not the BlazeFace back model: ${padShapes.size} ConstantOfShape, ${reshapeTargets.size} Reshape`);

  const edited = new Set<string>();
  let newGraph = editMessages(graph, GRAPH_INITIALIZER, (tensor) => {
    const name = stringOf(tensor, TENSOR_NAME)!;
    const values = int64Values(tensor);
    if (padShapes.has(name)) {
      edited.add(name);
      const [n, c, h, w] = values;
      return int64Tensor(name, [n, c, scaled(h, ratio, name), scaled(w, ratio, name)]);
    }
    if (reshapeTargets.has(name)) {
      edited.add(name);
      return int64Tensor(name, [values[0], -1, values[2]]);
    }
    return tensor;
  });
  if (edited.size !== padShapes.size + reshapeTargets.size) throw new Error('BlazeFace: a shape tensor is not an initializer');
  // The NHWC input [1, 256, 256, 3] goes through a Transpose to NCHW first: the graph starts after it.
  const inputName = stringOf(readFields(one(messages(graph, GRAPH_INPUT), 'input')), VALUE_INFO_NAME)!;
  const transposes = nodes.filter((n) => stringOf(n, NODE_OP_TYPE) === 'Transpose' && stringsOf(n, NODE_INPUT)[0] === inputName);
  const nchwName = stringsOf(one(transposes, 'Transpose of the input'), NODE_OUTPUT)[0];
  if (nodes.some((n) => n !== transposes[0] && stringsOf(n, NODE_INPUT).includes(inputName))) throw new Error('BlazeFace: the input is used beyond its Transpose');
  newGraph = newGraph.filter((f) => f.value !== transposes[0].bytes);
  newGraph = editMessages(newGraph, GRAPH_INPUT, (info) =>
    withDims(info, (dims) => [dims[0], dims[3], size, size]).map((f) => (f.field === VALUE_INFO_NAME ? { ...f, value: new TextEncoder().encode(nchwName) } : f)),
  );
  // Outputs [1, anchors, values]: anchors grow with the input's area.
  newGraph = editMessages(newGraph, GRAPH_OUTPUT, (info) => withDims(info, (dims) => [dims[0], scaled(dims[1], ratio * ratio, 'output'), dims[2]]));
  newGraph = newGraph.filter((f) => f.field !== GRAPH_VALUE_INFO);
  return writeFields(fields.map((f) => (f.field === MODEL_GRAPH ? { ...f, value: writeFields(newGraph) } : f)));
}

function scaled(n: number, ratio: number, what: string): number {
  const v = n * ratio;
  if (!Number.isInteger(v)) throw new Error(`BlazeFace: ${what} dim ${n} does not scale to a whole number`);
  return v;
}

function one<T>(list: T[], what: string): T {
  if (list.length !== 1) throw new Error(`ONNX model: expected one ${what}, found ${list.length}`);
  return list[0];
}

/** The values of an int64 tensor, from raw_data or int64_data. */
export function int64Values(tensor: ProtoField[]): number[] {
  const raw = messages(tensor, TENSOR_RAW_DATA)[0];
  if (raw) {
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    return Array.from({ length: raw.byteLength / 8 }, (_, i) => Number(view.getBigInt64(i * 8, true)));
  }
  return tensor.filter((f) => f.field === TENSOR_INT64_DATA).flatMap((f) => (f.wireType === 0 ? [f.value as bigint] : packedVarints(f.value as Uint8Array))).map((v) => Number(BigInt.asIntN(64, v)));
}

function packedVarints(bytes: Uint8Array): bigint[] {
  // A packed repeated field is a run of varints: the same bytes as fields without their tags.
  const out: bigint[] = [];
  let v = 0n;
  let shift = 0n;
  for (const b of bytes) {
    v |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if (!(b & 0x80)) {
      out.push(v);
      v = 0n;
      shift = 0n;
    }
  }
  return out;
}

function int64Tensor(name: string, values: number[]): ProtoField[] {
  const raw = new Uint8Array(values.length * 8);
  const view = new DataView(raw.buffer);
  values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
  return [
    { field: TENSOR_DIMS, wireType: 0, value: BigInt(values.length) },
    { field: TENSOR_DATA_TYPE, wireType: 0, value: BigInt(INT64) },
    { field: TENSOR_NAME, wireType: 2, value: new TextEncoder().encode(name) },
    { field: TENSOR_RAW_DATA, wireType: 2, value: raw },
  ];
}

/** A ValueInfoProto with its tensor shape's dims replaced by `edit` of them. */
function withDims(info: ProtoField[], edit: (dims: number[]) => number[]): ProtoField[] {
  const dimsOf = (shape: ProtoField[]) => messages(shape, SHAPE_DIM).map((d) => Number(d.length ? (readFields(d).find((f) => f.field === DIM_VALUE)?.value as bigint) : 0n));
  return editMessages(info, VALUE_INFO_TYPE, (type) =>
    editMessages(type, TYPE_TENSOR, (tensorType) =>
      editMessages(tensorType, TENSOR_TYPE_SHAPE, (shape) => {
        const dims = edit(dimsOf(shape));
        return dims.map((d) => ({ field: SHAPE_DIM, wireType: 2, value: writeFields([{ field: DIM_VALUE, wireType: 0, value: BigInt(d) }]) }));
      }),
    ),
  );
}
