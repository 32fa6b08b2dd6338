// Protobuf wire format read into a flat list of fields and written back unchanged, so that a few
// fields of a large message (an ONNX model) can be edited and every other byte kept as it was.
// The counterpart of ProtoWriter (onnx-writer.ts), which only builds new messages.
import { encodeVarint } from './onnx-writer.js';

export interface ProtoField {
  field: number;
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  wireType: number;
  /** The varint's value, or the field's bytes (length-delimited: without its length prefix). */
  value: bigint | Uint8Array;
}

export function readFields(bytes: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= bytes.length) throw new Error('protobuf: varint runs past the end');
      const b = bytes[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  const take = (n: number): Uint8Array => {
    if (pos + n > bytes.length) throw new Error('protobuf: field runs past the end');
    return bytes.subarray(pos, (pos += n));
  };
  while (pos < bytes.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (wireType === 0) fields.push({ field, wireType, value: varint() });
    else if (wireType === 1) fields.push({ field, wireType, value: take(8) });
    else if (wireType === 2) fields.push({ field, wireType, value: take(Number(varint())) });
    else if (wireType === 5) fields.push({ field, wireType, value: take(4) });
    else throw new Error(`protobuf: wire type ${wireType} of field ${field} is not supported`);
  }
  return fields;
}

export function writeFields(fields: ProtoField[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  const varint = (value: bigint) => chunks.push(encodeVarint(value));
  for (const f of fields) {
    varint(BigInt((f.field << 3) | f.wireType));
    if (f.wireType === 0) varint(f.value as bigint);
    else {
      const b = f.value as Uint8Array;
      if (f.wireType === 2) varint(BigInt(b.length));
      chunks.push(b);
    }
  }
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

/** The bytes of every length-delimited `field`. */
export function messages(fields: ProtoField[], field: number): Uint8Array[] {
  return fields.filter((f) => f.field === field && f.wireType === 2).map((f) => f.value as Uint8Array);
}

export function stringOf(fields: ProtoField[], field: number): string | undefined {
  const [b] = messages(fields, field);
  return b && new TextDecoder().decode(b);
}

export function stringsOf(fields: ProtoField[], field: number): string[] {
  return messages(fields, field).map((b) => new TextDecoder().decode(b));
}

/** `fields` with each length-delimited `field` replaced by what `edit` makes of its sub-fields. */
export function editMessages(fields: ProtoField[], field: number, edit: (sub: ProtoField[], index: number) => ProtoField[]): ProtoField[] {
  let i = 0;
  return fields.map((f) => (f.field === field && f.wireType === 2 ? { ...f, value: writeFields(edit(readFields(f.value as Uint8Array), i++)) } : f));
}
