// Size of a PNG or JPEG image read from its header, without decoding it: cheap enough for the
// request path, and it sees a decompression bomb before anything allocates its pixels.
import fs from 'node:fs/promises';

export interface ImageHeader {
  format: 'png' | 'jpeg';
  width: number;
  height: number;
}

/** Bytes read from the start of the file: enough for a PNG's IHDR and most JPEG SOF markers. */
const HEAD_BYTES = 256 * 1024;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The header of a PNG or JPEG file; null when the file is neither (or the header is cut off). */
export async function readImageHeader(file: string): Promise<ImageHeader | null> {
  const handle = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return parseImageHeader(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

export function parseImageHeader(head: Buffer): ImageHeader | null {
  if (head.length >= 24 && head.subarray(0, 8).equals(PNG_SIGNATURE) && head.toString('latin1', 12, 16) === 'IHDR') {
    const width = head.readUInt32BE(16);
    const height = head.readUInt32BE(20);
    return width > 0 && height > 0 ? { format: 'png', width, height } : null;
  }
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xd8) return parseJpeg(head);
  return null;
}

/** Walks JPEG markers to the first start-of-frame (SOF0..SOF15 but DHT, JPG, DAC). */
function parseJpeg(head: Buffer): ImageHeader | null {
  let at = 2;
  while (at + 9 < head.length) {
    if (head[at] !== 0xff) return null;
    const marker = head[at + 1];
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2; // markers without a length
      continue;
    }
    const length = head.readUInt16BE(at + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      const height = head.readUInt16BE(at + 5);
      const width = head.readUInt16BE(at + 7);
      return width > 0 && height > 0 ? { format: 'jpeg', width, height } : null;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / scan before any frame header
    at += 2 + length;
  }
  return null;
}
