// Broken and hostile media files for the bad-input corpus, made from the test clips or from
// nothing: none is stored in the repository.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** The valid media the corpus starts from (testkit/media.ts makes them). */
export interface SourceMedia {
  /** 20 frames, 320x240, H.264 MP4. */
  clip: string;
  /** 320x240 PNG of the same camera. */
  reference: string;
  /** 26 frames, 320x240. */
  clip26: string;
  /** 640x480 PNG. */
  referenceLarge: string;
  /** A 320x240 JPEG. */
  jpeg: string;
}

export interface BadMedia {
  empty: Buffer;
  /** The first third of an MP4 whose index (moov) is at its end. */
  truncatedMp4: Buffer;
  /** Bytes of a fixed pseudo-random sequence. */
  randomBytes: Buffer;
  textAsMp4: Buffer;
  /** An MP4 container with no video frame in it. */
  noFrames: Buffer;
  /** A PNG whose header claims 20000x20000 (1.2 GB of pixels) over a 1 KiB deflate stream. */
  pngBomb: Buffer;
}

export function makeBadMedia(src: SourceMedia, workDir: string): BadMedia {
  fs.mkdirSync(workDir, { recursive: true });
  return {
    empty: Buffer.alloc(0),
    truncatedMp4: truncatedMp4(src.clip, workDir),
    randomBytes: pseudoRandom(64 * 1024, 0x5eed),
    textAsMp4: Buffer.from('This is a text file with an .mp4 name.\n'.repeat(40)),
    noFrames: noFramesMp4(workDir),
    pngBomb: pngBomb(20_000, 20_000),
  };
}

function truncatedMp4(clip: string, workDir: string): Buffer {
  const moovAtEnd = path.join(workDir, 'moov-at-end.mp4');
  if (!fs.existsSync(moovAtEnd)) execFileSync('ffmpeg', ['-y', '-v', 'error', '-i', clip, '-c', 'copy', moovAtEnd]);
  const whole = fs.readFileSync(moovAtEnd);
  return whole.subarray(0, Math.floor(whole.length / 3));
}

function noFramesMp4(workDir: string): Buffer {
  const file = path.join(workDir, 'no-frames.mp4');
  if (!fs.existsSync(file)) {
    execFileSync('ffmpeg', ['-y', '-v', 'error', '-f', 'lavfi', '-i', 'color=c=gray:s=320x240:r=25', '-frames:v', '0', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', file]);
  }
  return fs.readFileSync(file);
}

/** xorshift32: the same "random" bytes on every run. */
export function pseudoRandom(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** A grey 8-bit PNG that claims `width`x`height`; its IDAT holds only the first MiB of the rows. */
export function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(zlib.crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(1024 * 1024), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
