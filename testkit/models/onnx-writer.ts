// A minimal ONNX writer: builds a graph of nodes and float initializers and encodes it as the
// ModelProto protobuf that OpenCV's ONNX importer reads. There is no onnx package on npm that works
// without Python, and the part of protobuf a model needs (varints, length-delimited fields, fixed32
// floats) is small, so it is written out here.
//
// Field numbers are those of onnx/onnx.proto (proto2: repeated scalars are written unpacked, which
// every protobuf parser accepts).

/** ONNX TensorProto.DataType values used here. */
const FLOAT = 1;
const INT64 = 7;

/** AttributeProto.AttributeType values. */
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_STRING = 3;
const ATTR_FLOATS = 6;
const ATTR_INTS = 7;

/** Opset 11: new enough for Pad with its pads as an input, old enough for OpenCV 4.6's importer. */
export const OPSET = 11;
/** IR version 6 goes with opset 11 (ONNX 1.6). */
const IR_VERSION = 6;

/** An attribute value, tagged so that 0 can be an int or a float without guessing. */
export type Attribute =
  | { int: number }
  | { float: number }
  | { ints: number[] }
  | { floats: number[] }
  | { string: string };

export const attr = {
  int: (v: number): Attribute => ({ int: v }),
  float: (v: number): Attribute => ({ float: v }),
  ints: (v: number[]): Attribute => ({ ints: v }),
  floats: (v: number[]): Attribute => ({ floats: v }),
  string: (v: string): Attribute => ({ string: v }),
};

interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, Attribute>;
}

interface Initializer {
  name: string;
  dims: number[];
  type: typeof FLOAT | typeof INT64;
  raw: Uint8Array;
}

interface ValueInfo {
  name: string;
  dims: number[];
}

/** A graph under construction; `encode()` gives the bytes of a .onnx file. */
export class OnnxGraph {
  private readonly nodes: Node[] = [];
  private readonly initializers: Initializer[] = [];
  private readonly inputs: ValueInfo[] = [];
  private readonly outputs: ValueInfo[] = [];
  private readonly names = new Set<string>();
  private counter = 0;

  constructor(readonly name: string) {}

  /** A fresh tensor name with a readable prefix. */
  fresh(prefix: string): string {
    let n: string;
    do n = `${prefix}_${this.counter++}`;
    while (this.names.has(n));
    this.names.add(n);
    return n;
  }

  input(name: string, dims: number[]): string {
    this.claim(name);
    this.inputs.push({ name, dims });
    return name;
  }

  output(name: string, dims: number[]): void {
    this.outputs.push({ name, dims });
  }

  /** A float32 constant; `data.length` must equal the product of `dims`. */
  floats(prefix: string, dims: number[], data: Float32Array | number[]): string {
    const values = data instanceof Float32Array ? data : Float32Array.from(data);
    checkSize(prefix, dims, values.length);
    const name = this.fresh(prefix);
    this.initializers.push({ name, dims, type: FLOAT, raw: littleEndian(values) });
    return name;
  }

  /** An int64 constant (shapes, pads). */
  int64s(prefix: string, values: number[]): string {
    const name = this.fresh(prefix);
    const data = BigInt64Array.from(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims: [values.length], type: INT64, raw: littleEndian(data) });
    return name;
  }

  /** Adds a node with one output and returns that output's name. */
  node(op: string, inputs: string[], attributes: Record<string, Attribute> = {}, output?: string): string {
    const out = output ?? this.fresh(op.toLowerCase());
    if (output) this.claim(output);
    this.nodes.push({ op, inputs, outputs: [out], attributes });
    return out;
  }

  encode(): Uint8Array {
    const graph = new ProtoWriter();
    this.nodes.forEach((n, i) => graph.message(1, encodeNode(n, `${n.op}_${i}`)));
    graph.string(2, this.name);
    for (const t of this.initializers) graph.message(5, encodeTensor(t));
    for (const v of this.inputs) graph.message(11, encodeValueInfo(v));
    for (const v of this.outputs) graph.message(12, encodeValueInfo(v));

    const model = new ProtoWriter();
    model.int64(1, IR_VERSION);
    model.string(2, 'video-analytics-appliance scripts/models');
    model.message(7, graph);
    const opset = new ProtoWriter();
    opset.string(1, '');
    opset.int64(2, OPSET);
    model.message(8, opset);
    return model.finish();
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new Error(`ONNX graph ${this.name}: name ${name} used twice`);
    this.names.add(name);
  }
}

/** One float initializer's TensorProto bytes (for rewrites of an existing model). */
export function floatTensor(name: string, dims: number[], values: Float32Array): Uint8Array {
  checkSize(name, dims, values.length);
  return encodeTensor({ name, dims, type: FLOAT, raw: littleEndian(values) }).finish();
}

/** One NodeProto's bytes (for rewrites of an existing model). */
export function onnxNode(op: string, inputs: string[], outputs: string[], name: string, attributes: Record<string, Attribute> = {}): Uint8Array {
  return encodeNode({ op, inputs, outputs, attributes }, name).finish();
}

function checkSize(name: string, dims: number[], length: number): void {
  const expected = dims.reduce((a, b) => a * b, 1);
  if (expected !== length) throw new Error(`${name}: ${length} values for dims [${dims}] (${expected})`);
}

/** ONNX raw_data is little-endian; copy so that the bytes do not alias a larger buffer. */
function littleEndian(values: Float32Array | BigInt64Array): Uint8Array {
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('big-endian hosts are not supported');
  return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
}

function encodeNode(n: Node, name: string): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, name);
  w.string(4, n.op);
  for (const [key, value] of Object.entries(n.attributes)) w.message(5, encodeAttribute(key, value));
  return w;
}

function encodeAttribute(name: string, a: Attribute): ProtoWriter {
  const w = new ProtoWriter();
  w.string(1, name);
  if ('float' in a) {
    w.float(2, a.float);
    w.int64(20, ATTR_FLOAT);
  } else if ('int' in a) {
    w.int64(3, a.int);
    w.int64(20, ATTR_INT);
  } else if ('string' in a) {
    w.string(4, a.string);
    w.int64(20, ATTR_STRING);
  } else if ('floats' in a) {
    for (const f of a.floats) w.float(7, f);
    w.int64(20, ATTR_FLOATS);
  } else {
    for (const i of a.ints) w.int64(8, i);
    w.int64(20, ATTR_INTS);
  }
  return w;
}

function encodeTensor(t: Initializer): ProtoWriter {
  const w = new ProtoWriter();
  for (const d of t.dims) w.int64(1, d);
  w.int64(2, t.type);
  w.string(8, t.name);
  w.bytes(9, t.raw);
  return w;
}

function encodeValueInfo(v: ValueInfo): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.dims) {
    const dim = new ProtoWriter();
    dim.int64(1, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter();
  tensorType.int64(1, FLOAT);
  tensorType.message(2, shape);
  const type = new ProtoWriter();
  type.message(1, tensorType);
  const w = new ProtoWriter();
  w.string(1, v.name);
  w.message(2, type);
  return w;
}

/** Protobuf wire format: just the field kinds ONNX models need. */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  /** Varint field (wire type 0); negative values as 64-bit two's complement, as int64 requires. */
  int64(field: number, value: number): void {
    this.tag(field, 0);
    this.varint(BigInt.asUintN(64, BigInt(value)));
  }

  /** fixed32 float field (wire type 5). */
  float(field: number, value: number): void {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
  }

  string(field: number, value: string): void {
    this.bytes(field, new TextEncoder().encode(value));
  }

  /** Length-delimited field (wire type 2). */
  bytes(field: number, value: Uint8Array): void {
    this.tag(field, 2);
    this.varint(BigInt(value.length));
    this.push(value);
  }

  message(field: number, value: ProtoWriter): void {
    this.bytes(field, value.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const c of this.chunks) {
      out.set(c, offset);
      offset += c.length;
    }
    return out;
  }

  private tag(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private varint(value: bigint): void {
    this.push(encodeVarint(value));
  }

  private push(b: Uint8Array): void {
    this.chunks.push(b);
    this.length += b.length;
  }
}

/** A protobuf varint (negative values as 64-bit two's complement). */
export function encodeVarint(value: bigint): Uint8Array {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Uint8Array.from(bytes);
}
