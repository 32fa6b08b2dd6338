// BlazeFace with its 24-channel stage widened to 32 channels, so that onnxruntime runs the whole
// network in its blocked layout (NCHWc, 16 channels a block with AVX-512). onnxruntime pads a
// convolution's 24 channels to 32 in that layout anyway, but cannot keep the stage's Add, Relu and
// MaxPool there: each of the 16 blocks of that stage left the layout and came back (ReorderOutput,
// ReorderInput), which with the unfused Add and Relu took about 30% of a forward pass
// (onnxruntime's profiler, 256 px). The 48-channel stage left it too, at the Concat that pads the
// shortcut with zero channels, which becomes a 1x1 Conv of identity weights (below). Measured, 200
// passes on one thread, quiet machine: 4.9 against 8.0 ms at 256 px, 1.2 against 1.9 at 128.
//
// The extra 8 channels are exact zeros: their filters and biases are zero, so every Conv, Relu,
// Add and MaxPool keeps them zero, and the next stage's weights ignore them (zero input columns).
// Where the network grows 24 to 48 channels (a MaxPool of the stage concatenated with 24 zero
// channels), and 48 to 96, the Concat becomes a Conv whose weights copy its input's channels and
// add zero ones: [x 24, 0 x 8] to [x 24, 0 x 24]. The outputs are the same up to float rounding
// (test/37).
import { editMessages, messages, readFields, stringOf, stringsOf, writeFields, type ProtoField } from './proto-fields.js';
import { int64Values } from './rewrite-blazeface.js';
import { attr, floatTensor, onnxNode } from './onnx-writer.js';
import {
  MODEL_GRAPH,
  GRAPH_NODE,
  GRAPH_INITIALIZER,
  NODE_INPUT,
  NODE_OUTPUT,
  NODE_OP_TYPE,
  NODE_ATTRIBUTE,
  ATTRIBUTE_NAME,
  ATTRIBUTE_I,
  TENSOR_DIMS,
  TENSOR_DATA_TYPE,
  TENSOR_NAME,
  TENSOR_RAW_DATA,
  FLOAT,
} from './onnx-fields.js';

/** The stage's width in the package model, and what it becomes. */
const NARROW = 24;
const WIDE = 32;

/** Ops that keep their input's channels: a widened input makes a widened output. */
const CHANNEL_PRESERVING = new Set(['Relu', 'Add', 'MaxPool']);

/** `model` (a BlazeFace back model, any input side) with its 24-channel tensors 32 channels wide. */
export function widenBlazeFace(model: Uint8Array): Uint8Array {
  const fields = readFields(model);
  const graph = readFields(messages(fields, MODEL_GRAPH)[0]);
  const nodes = messages(graph, GRAPH_NODE).map((bytes) => readFields(bytes));
  const op = (n: ProtoField[]) => stringOf(n, NODE_OP_TYPE)!;
  const initializers = new Map(messages(graph, GRAPH_INITIALIZER).map((bytes) => [stringOf(readFields(bytes), TENSOR_NAME)!, readFields(bytes)]));

  // Walk the nodes in order (ONNX requires topological order), deciding what to widen.
  const wide = new Set<string>();
  /** Initializer name -> how to rewrite it. */
  const edits = new Map<string, (t: ProtoField[]) => ProtoField[]>();
  /** Conv nodes whose `group` goes from 24 to 32 (depthwise), by index. */
  const regroup = new Set<number>();
  /** Channels of the tensors made so far (Convs, and the ops that keep them). */
  const channelsOf = new Map<string, number>();
  /** Concat nodes that become identity Convs, by index, and the ConstantOfShape nodes they no longer need. */
  const replaced = new Map<number, { x: string; output: string; inputs: number; outputs: number }>();
  const dropped = new Set<number>();
  nodes.forEach((n, index) => {
    const [input, ...rest] = stringsOf(n, NODE_INPUT);
    const [output] = stringsOf(n, NODE_OUTPUT);
    if (op(n) === 'Conv') {
      const [w, b] = rest;
      const [o, i, kh, kw] = dimsOf(initializers.get(w)!);
      const group = intAttribute(n, 'group') ?? 1;
      const widenIn = wide.has(input);
      const widenOut = o === NARROW;
      if (widenIn && !(group === 1 || group === NARROW)) throw new Error(`BlazeFace: Conv ${output} of group ${group} on a widened input`);
      if (group === NARROW) {
        if (!widenIn || !widenOut || i !== 1) throw new Error(`BlazeFace: depthwise Conv ${output} is not 24 to 24 channels on the stage`);
        regroup.add(index);
      }
      if (widenIn && group === 1 && i !== NARROW) throw new Error(`BlazeFace: Conv ${output} takes ${i} channels of a 24-channel tensor`);
      if (widenOut || widenIn) {
        const inWide = widenIn && group === 1 ? WIDE : i;
        edits.set(w, (t) => withFloats(t, [widenOut ? WIDE : o, inWide, kh, kw], padWeights(floats(t), [o, i, kh, kw], widenOut ? WIDE : o, inWide)));
        if (b && widenOut) edits.set(b, (t) => withFloats(t, [WIDE], padWeights(floats(t), [o, 1, 1, 1], WIDE, 1)));
      }
      if (widenOut) wide.add(output);
      channelsOf.set(output, o);
    } else if (CHANNEL_PRESERVING.has(op(n))) {
      const inputs = stringsOf(n, NODE_INPUT);
      const known = inputs.map((x) => channelsOf.get(x)).find((c) => c !== undefined);
      if (known !== undefined) channelsOf.set(output, known);
      const widened = inputs.filter((x) => wide.has(x)).length;
      if (widened > 0 && widened < inputs.length) throw new Error(`BlazeFace: ${op(n)} ${output} mixes widened and other inputs`);
      if (widened) wide.add(output);
    } else if (op(n) === 'Concat') {
      // A shortcut's channel padding: a MaxPool concatenated with zero channels. It becomes a 1x1
      // Conv of identity weights, which the blocked layout keeps (a Concat of a constant it does
      // not): x * 1 + 0 is x exactly, and 0 * x is 0.
      const [x, zeros] = stringsOf(n, NODE_INPUT);
      const maker = nodes.find((m) => stringsOf(m, NODE_OUTPUT)[0] === zeros);
      if (!maker || op(maker) !== 'ConstantOfShape') throw new Error(`BlazeFace: Concat ${output} does not pad with zeros`);
      const [, padded] = int64Values(initializers.get(stringsOf(maker, NODE_INPUT)[0])!);
      const channels = wide.has(x) ? NARROW : channelsOf.get(x);
      if (channels === undefined) throw new Error(`BlazeFace: Concat ${output} pads a tensor of unknown width`);
      const inputs = wide.has(x) ? WIDE : channels;
      replaced.set(index, { x, output, inputs, outputs: channels + padded });
      dropped.add(nodes.indexOf(maker));
      channelsOf.set(output, channels + padded);
      return;
    } else if (stringsOf(n, NODE_INPUT).some((x) => wide.has(x))) {
      throw new Error(`BlazeFace: ${op(n)} ${output} takes a widened tensor`);
    }
  });
  if (regroup.size === 0) throw new Error('BlazeFace: no 24-channel stage found');
  if (replaced.size === 0) throw new Error('BlazeFace: no shortcut padding found');

  const added: ProtoField[] = [];
  let nodeIndex = 0;
  let newGraph = editMessages(graph, GRAPH_NODE, (n) => {
    const index = nodeIndex++;
    if (regroup.has(index)) return setIntAttribute(n, 'group', WIDE);
    const concat = replaced.get(index);
    if (!concat) return n;
    const weights = new Float32Array(concat.outputs * concat.inputs);
    for (let c = 0; c < Math.min(concat.inputs, concat.outputs); c++) weights[c * concat.inputs + c] = 1;
    const w = `${concat.output}/identity_weights`;
    const b = `${concat.output}/identity_bias`;
    added.push(
      { field: GRAPH_INITIALIZER, wireType: 2, value: floatTensor(w, [concat.outputs, concat.inputs, 1, 1], weights) },
      { field: GRAPH_INITIALIZER, wireType: 2, value: floatTensor(b, [concat.outputs], new Float32Array(concat.outputs)) },
    );
    // OpenCV DNN wants the kernel's shape spelled out.
    return readFields(onnxNode('Conv', [concat.x, w, b], [concat.output], `${concat.output}/identity`, { kernel_shape: attr.ints([1, 1]) }));
  });
  // The ConstantOfShape nodes go, and the shapes they read with them.
  const droppedBytes = new Set(messages(newGraph, GRAPH_NODE).filter((_, i) => dropped.has(i)));
  const droppedShapes = new Set([...dropped].map((i) => stringsOf(nodes[i], NODE_INPUT)[0]));
  newGraph = newGraph.filter((f) => !(f.field === GRAPH_NODE && droppedBytes.has(f.value as Uint8Array)));
  newGraph = newGraph.filter((f) => !(f.field === GRAPH_INITIALIZER && droppedShapes.has(stringOf(readFields(f.value as Uint8Array), TENSOR_NAME)!)));
  newGraph = editMessages(newGraph, GRAPH_INITIALIZER, (t) => edits.get(stringOf(t, TENSOR_NAME)!)?.(t) ?? t);
  newGraph = [...newGraph, ...added];
  return writeFields(fields.map((f) => (f.field === MODEL_GRAPH ? { ...f, value: writeFields(newGraph) } : f)));
}

/** OIHW weights `w` of `dims`, padded with zeros to `outs` x `ins` channels. */
function padWeights(w: Float32Array, dims: number[], outs: number, ins: number): Float32Array {
  const [o, i, kh, kw] = dims;
  const k = kh * kw;
  const out = new Float32Array(outs * ins * k);
  for (let a = 0; a < o; a++) for (let b = 0; b < i; b++) out.set(w.subarray((a * i + b) * k, (a * i + b + 1) * k), (a * ins + b) * k);
  return out;
}

function dimsOf(t: ProtoField[]): number[] {
  return t.filter((f) => f.field === TENSOR_DIMS && f.wireType === 0).map((f) => Number(f.value as bigint));
}

function floats(t: ProtoField[]): Float32Array {
  const type = t.find((f) => f.field === TENSOR_DATA_TYPE)?.value;
  const [raw] = messages(t, TENSOR_RAW_DATA);
  if (Number(type) !== FLOAT || !raw || raw.length % 4) throw new Error(`BlazeFace: ${stringOf(t, TENSOR_NAME)} is not a float tensor with raw data (${raw?.length} bytes)`);
  // A copy of its own (a Buffer's slice() is a view, and need not be 4-byte aligned).
  return new Float32Array(Uint8Array.prototype.slice.call(raw).buffer);
}

/** Float initializer `t` with new dims and values, under its own name. */
function withFloats(t: ProtoField[], dims: number[], values: Float32Array): ProtoField[] {
  return readFields(floatTensor(stringOf(t, TENSOR_NAME)!, dims, values));
}

function intAttribute(node: ProtoField[], name: string): number | undefined {
  for (const a of messages(node, NODE_ATTRIBUTE)) {
    const f = readFields(a);
    if (stringOf(f, ATTRIBUTE_NAME) === name) return Number(f.find((x) => x.field === ATTRIBUTE_I)!.value as bigint);
  }
  return undefined;
}

function setIntAttribute(node: ProtoField[], name: string, value: number): ProtoField[] {
  return editMessages(node, NODE_ATTRIBUTE, (a) => (stringOf(a, ATTRIBUTE_NAME) === name ? a.map((f) => (f.field === ATTRIBUTE_I ? { ...f, value: BigInt(value) } : f)) : a));
}
