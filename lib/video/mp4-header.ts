// Frame count and size of the video track of an MP4/MOV file, read from its index (the moov
// box) without decoding: the common case of a VMS export, answered in well under a millisecond
// instead of an ffprobe start. Returns null whenever it is not sure (fragmented MP4, unknown
// codec, damaged boxes): the caller then asks ffprobe.
import fs from 'node:fs/promises';

export interface Mp4VideoHeader {
  width: number;
  height: number;
  frames: number;
  fps: number;
  codec: string;
}

/** The moov box of a short clip is a few KiB; past this, let ffprobe handle the file. */
const MAX_MOOV_BYTES = 8 * 1024 * 1024;
/** Sample entries FFmpeg decodes for us. */
const VIDEO_CODECS = new Set(['avc1', 'avc3', 'hvc1', 'hev1', 'mp4v', 'av01', 'vp09', 'mjpa', 'mjpg', 'jpeg']);

interface Box {
  type: string;
  start: number; // of the payload
  end: number;
}

export async function readMp4VideoHeader(file: string): Promise<Mp4VideoHeader | null> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(16);
    let at = 0;
    let first = true;
    while (at + 8 <= size) {
      await handle.read(head, 0, 16, at);
      let length = head.readUInt32BE(0);
      const type = head.toString('latin1', 4, 8);
      let headerLength = 8;
      if (length === 1) {
        length = Number(head.readBigUInt64BE(8));
        headerLength = 16;
      } else if (length === 0) {
        length = size - at;
      }
      if (first && type !== 'ftyp') return null; // not an ISO media file
      first = false;
      if (length < headerLength || at + length > size) return null;
      if (type === 'moov') {
        if (length > MAX_MOOV_BYTES) return null;
        const moov = Buffer.alloc(length - headerLength);
        await handle.read(moov, 0, moov.length, at + headerLength);
        return parseMoov(moov);
      }
      at += length;
    }
    return null;
  } finally {
    await handle.close();
  }
}

function children(buf: Buffer, start: number, end: number): Box[] {
  const boxes: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    const length = buf.readUInt32BE(at);
    if (length < 8 || at + length > end) break; // 64-bit sizes do not occur inside a small moov
    boxes.push({ type: buf.toString('latin1', at + 4, at + 8), start: at + 8, end: at + length });
    at += length;
  }
  return boxes;
}

function child(buf: Buffer, parent: Box, type: string): Box | undefined {
  return children(buf, parent.start, parent.end).find((b) => b.type === type);
}

function parseMoov(moov: Buffer): Mp4VideoHeader | null {
  const top = children(moov, 0, moov.length);
  if (top.some((b) => b.type === 'mvex')) return null; // fragmented: samples live in moof boxes
  for (const trak of top.filter((b) => b.type === 'trak')) {
    const mdia = child(moov, trak, 'mdia');
    const hdlr = mdia && child(moov, mdia, 'hdlr');
    if (!mdia || !hdlr || moov.toString('latin1', hdlr.start + 8, hdlr.start + 12) !== 'vide') continue;
    const mdhd = child(moov, mdia, 'mdhd');
    const minf = child(moov, mdia, 'minf');
    const stbl = minf && child(moov, minf, 'stbl');
    const stsd = stbl && child(moov, stbl, 'stsd');
    const sizes = stbl && (child(moov, stbl, 'stsz') ?? child(moov, stbl, 'stz2'));
    if (!mdhd || !stsd || !sizes) return null;
    const entry = children(moov, stsd.start + 8, stsd.end)[0];
    if (!entry || !VIDEO_CODECS.has(entry.type) || entry.end - entry.start < 28) return null;
    const width = moov.readUInt16BE(entry.start + 24);
    const height = moov.readUInt16BE(entry.start + 26);
    const frames = moov.readUInt32BE(sizes.start + 8);
    const version = moov[mdhd.start];
    const timescale = moov.readUInt32BE(mdhd.start + (version === 1 ? 20 : 12));
    const duration = version === 1 ? Number(moov.readBigUInt64BE(mdhd.start + 24)) : moov.readUInt32BE(mdhd.start + 16);
    if (!width || !height || !frames) return null;
    const fps = duration > 0 && timescale > 0 ? frames / (duration / timescale) : 0;
    return { width, height, frames, fps: Math.round(fps * 1000) / 1000, codec: entry.type };
  }
  return null;
}
