// Frame-by-frame decoding of a long video by an ffmpeg child process that writes raw I420 frames
// (see yuv-frame.ts) to a pipe. The decoder runs on another core than the analysis (the worker process is single
// threaded), and only a few frames are in flight at a time, so memory stays bounded whatever the
// video's length.
import { spawn } from 'node:child_process';
import { YuvFrame } from './yuv-frame.js';
import { DecodeError } from './errors.js';

export interface FrameReaderOptions {
  width: number;
  height: number;
  /** Stop after this many frames (0 = all). */
  maxFrames?: number;
}

export interface FrameSource {
  /**
   * Frames in order, of width x height rounded up to even numbers (4:2:0 needs even sizes: an odd
   * size gets one black column or row).
   */
  frames(): AsyncGenerator<YuvFrame>;
  /** ffmpeg's complaint when the stream ended with an error (truncated or corrupt data), else null. */
  readonly decodeError: string | null;
  close(): void;
}

export function readFrames(file: string, options: FrameReaderOptions): FrameSource {
  const { width, height } = evenSize(options.width, options.height);
  const frameBytes = YuvFrame.bytes(width, height);
  const args = ['-v', 'error', '-nostdin', '-threads', '1', '-i', file, '-map', '0:v:0'];
  if (options.maxFrames && options.maxFrames > 0) args.push('-frames:v', String(options.maxFrames));
  // The scale keeps every frame at the declared size even if the stream changes size mid-way.
  const filter = `scale=${options.width}:${options.height},pad=${width}:${height}`;
  args.push('-vsync', 'passthrough', '-vf', filter, '-f', 'rawvideo', '-pix_fmt', 'yuv420p', 'pipe:1');
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < 4000) stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let spawnError: Error | null = null;
  child.on('error', (err) => {
    spawnError = err;
  });
  let decodeError: string | null = null;

  async function* frames(): AsyncGenerator<YuvFrame> {
    // Chunks are copied into a fresh buffer per frame: the caller may keep frames for a while.
    let frame = Buffer.allocUnsafe(frameBytes);
    let filled = 0;
    let finished = false;
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        let offset = 0;
        while (offset < chunk.length) {
          const n = Math.min(frameBytes - filled, chunk.length - offset);
          chunk.copy(frame, filled, offset, offset + n);
          filled += n;
          offset += n;
          if (filled === frameBytes) {
            filled = 0;
            const full = frame;
            frame = Buffer.allocUnsafe(frameBytes);
            yield new YuvFrame(full, width, height);
          }
        }
      }
      finished = true;
    } finally {
      if (!finished) child.kill('SIGKILL'); // the caller stopped early
      const code = await exited;
      if (spawnError) throw new DecodeError(`ffmpeg cannot be started: ${(spawnError as Error).message}`);
      if (finished && code !== 0) decodeError = firstLine(stderr) || `ffmpeg exited with code ${code}`;
    }
  }

  return {
    frames,
    get decodeError() {
      return decodeError;
    },
    close() {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** The size rounded up to even numbers. */
export function evenSize(width: number, height: number): { width: number; height: number } {
  return { width: width + (width % 2), height: height + (height % 2) };
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.replace(/^\[[^\]]*\]\s*/, '').replace(/^\S*\/\S*:\s*/, '').trim();
}
