// Frame-by-frame decoding of a long video by an ffmpeg child process that writes raw I420 frames
// (see yuv-frame.ts) to a pipe. The decoder runs on another core than the analysis, driven by the
// process's pipe thread (pipe-thread.ts) so that it decodes ahead while the analysis is busy, and
// only a few frames are in flight at a time, so memory stays bounded whatever the video's length.
import { openPipeStream } from './pipe-thread.js';
import type { PipeEvent } from './pipe-messages.js';
import { YuvFrame } from './yuv-frame.js';
import { DecodeError } from './errors.js';
import { firstStderrLine } from './ffmpeg-stderr.js';
import { collectFrameGarbage } from './frame-garbage.js';

/**
 * Frames the decoder may run ahead of the analysis: enough to cover a detector run (tens of ms,
 * a few frames of decoding), few enough to stay small next to the frames the overlay waits for
 * (3 MB each at 1080p).
 */
export const FRAMES_AHEAD = 4;

export interface FrameReaderOptions {
  width: number;
  height: number;
  /** The first frame to deliver (the input's own numbering; those before are decoded and dropped). */
  startFrame?: number;
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
  /** Frames decoded ahead and not yet taken (at most FRAMES_AHEAD). */
  readonly ahead: number;
  close(): void;
}

/** The decoder's command line (after `ffmpeg`): raw I420 frames of the even size on its stdout. */
export function decoderArgs(file: string, options: FrameReaderOptions): string[] {
  const { width, height } = evenSize(options.width, options.height);
  const args = ['-v', 'error', '-nostdin', '-threads', '1', '-i', file, '-map', '0:v:0'];
  if (options.maxFrames && options.maxFrames > 0) args.push('-frames:v', String(options.maxFrames));
  // trim counts decoded frames, so the start is exact whatever the keyframes or timestamps; the
  // scale keeps every frame at the declared size even if the stream changes size mid-way.
  const trim = options.startFrame ? `trim=start_frame=${options.startFrame},` : '';
  const filter = `${trim}scale=${options.width}:${options.height},pad=${width}:${height}`;
  args.push('-vsync', 'passthrough', '-vf', filter, '-f', 'rawvideo', '-pix_fmt', 'yuv420p', 'pipe:1');
  return args;
}

export function readFrames(file: string, options: FrameReaderOptions): FrameSource {
  const { width, height } = evenSize(options.width, options.height);
  const frameBytes = YuvFrame.bytes(width, height);
  const args = decoderArgs(file, options);

  // Frames and the exit arrive in order; the generator takes them one at a time.
  const arrived: PipeEvent[] = [];
  let wake: (() => void) | null = null;
  const stream = openPipeStream((event) => {
    arrived.push(event);
    // Nothing follows a stream's exit: the thread need not keep the process alive for it.
    if (event.op === 'exit') stream.close();
    wake?.();
  });
  stream.send({ op: 'read', id: stream.id, args, frameBytes, ahead: FRAMES_AHEAD });
  let exited = false;
  let decodeError: string | null = null;

  const next = async (): Promise<PipeEvent> => {
    // One turn of the event loop per frame even when frames are waiting (they are, while the
    // decoder keeps ahead): without it, promises alone carry the loop from frame to frame, and
    // neither IPC, timers nor the binding's deferred frees of OpenCV Mats run (a 1080p face log's
    // worker grows to 600-640 MB in 2000 frames instead of 510).
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (arrived.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    return arrived.shift()!;
  };

  async function* frames(): AsyncGenerator<YuvFrame> {
    let finished = false;
    try {
      for (;;) {
        const event = await next();
        if (event.op === 'frame') {
          stream.send({ op: 'took', id: stream.id });
          // The caller is done with the frame before: its leftovers go now (frame-garbage.ts).
          collectFrameGarbage();
          yield new YuvFrame(Buffer.from(event.data), width, height);
          continue;
        }
        if (event.op !== 'exit') continue;
        exited = true;
        finished = true;
        if (event.error) throw new DecodeError(`ffmpeg cannot be started: ${event.error.message}`);
        if (event.code !== 0) decodeError = firstStderrLine(event.stderr) || `ffmpeg exited with code ${event.code}`;
        return;
      }
    } finally {
      if (!finished) {
        // The caller stopped early: stop the decoder and wait for it to be gone.
        stream.send({ op: 'kill', id: stream.id });
        while (!exited) if ((await next()).op === 'exit') exited = true;
      }
    }
  }

  return {
    frames,
    get decodeError() {
      return decodeError;
    },
    get ahead() {
      return arrived.filter((e) => e.op === 'frame').length;
    },
    close() {
      if (!exited) stream.send({ op: 'kill', id: stream.id });
    },
  };
}

/** The size rounded up to even numbers. */
export function evenSize(width: number, height: number): { width: number; height: number } {
  return { width: width + (width % 2), height: height + (height % 2) };
}
