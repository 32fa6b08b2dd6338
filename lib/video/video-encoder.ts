// H.264 MP4 encoding by an ffmpeg child process fed raw I420 frames through a pipe: the encoder
// runs on another core than the analysis, fed by the process's pipe thread (pipe-thread.ts) so
// that handing a frame over costs the analysis no waiting. The moov atom is moved to the front
// (+faststart) so a browser can start playing the file before it has downloaded all of it.
import { openPipeStream, type PipeStream } from './pipe-thread.js';
import type { PipeEvent } from './pipe-messages.js';
import type { YuvFrame } from './yuv-frame.js';
import { fpsOrDefault } from './fps.js';
import { DiskFullError } from '../errors.js';

/** How ffmpeg reports ENOSPC (its strerror text), on any line of its stderr. */
const NO_SPACE = /no space left on device/i;

export interface VideoEncoderOptions {
  /** Frame size; even (4:2:0). */
  width: number;
  height: number;
  fps: number;
}

/**
 * x264 preset. Encoding 250 frames of 1080p (vtest.avi upscaled) took 4.7 s of CPU with
 * "ultrafast", 7.3 s with "superfast" and 9.6 s with "veryfast" on this appliance: at 25 fps the
 * whole budget of real time on 2 cores is 20 s, so only ultrafast leaves room for the analysis.
 * Its files are larger (about 1.8 Mbit/s for that clip at CRF 28), which a LAN shrugs off.
 */
const X264_PRESET = 'ultrafast';
/** Constant quality; 28 keeps drawn boxes and numbers crisp. */
const X264_CRF = '28';

/** A rate above this is taken for a misread one: the overlay is then written at DEFAULT_FPS. */
const MAX_ENCODE_FPS = 240;

/** Frames handed to the pipe thread and not yet in ffmpeg's pipe before write() waits. */
const MAX_QUEUED_FRAMES = 4;

/** The encoder's command line (after `ffmpeg`): raw I420 frames on its stdin, `file` written. */
export function encoderArgs(file: string, options: VideoEncoderOptions): string[] {
  const { width, height } = options;
  const fps = fpsOrDefault(options.fps, MAX_ENCODE_FPS);
  return [
    '-v', 'error', '-y',
    '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-r', String(fps), '-i', 'pipe:0',
    '-c:v', 'libx264', '-preset', X264_PRESET, '-crf', X264_CRF, '-pix_fmt', 'yuv420p',
    '-movflags', '+faststart', '-f', 'mp4', file,
  ];
}

export class VideoEncoder {
  private readonly stream: PipeStream;
  private readonly exited: Promise<Extract<PipeEvent, { op: 'exit' }>>;
  private exit: Extract<PipeEvent, { op: 'exit' }> | null = null;
  private queued = 0;
  private written: (() => void) | null = null;

  constructor(
    readonly file: string,
    private readonly options: VideoEncoderOptions,
  ) {
    const args = encoderArgs(file, options);
    let exited: (e: Extract<PipeEvent, { op: 'exit' }>) => void;
    this.exited = new Promise((resolve) => (exited = resolve));
    this.stream = openPipeStream((event) => {
      if (event.op === 'written') this.queued--;
      if (event.op === 'exit' && !this.exit) {
        this.exit = event;
        this.stream.close();
        exited(event);
      }
      this.written?.();
    });
    this.stream.send({ op: 'encode', id: this.stream.id, args });
  }

  /**
   * Queues one frame. Its buffer is handed over to the pipe thread, not copied: the frame cannot
   * be used afterwards. Waits when ffmpeg is MAX_QUEUED_FRAMES behind.
   */
  async write(frame: YuvFrame): Promise<void> {
    if (frame.width !== this.options.width || frame.height !== this.options.height) {
      throw new Error(`frame is ${frame.width}x${frame.height}, the video is ${this.options.width}x${this.options.height}`);
    }
    while (this.queued >= MAX_QUEUED_FRAMES && !this.exit) await new Promise<void>((resolve) => (this.written = resolve));
    this.written = null;
    if (this.exit) throw this.error(this.exit);
    const data = transferable(frame.data);
    this.queued++;
    this.stream.send({ op: 'frame', id: this.stream.id, data }, [data]);
  }

  /** Ends the stream and waits for the file to be complete. */
  async finish(): Promise<void> {
    this.stream.send({ op: 'end', id: this.stream.id });
    const exit = await this.exited;
    if (exit.error || exit.code !== 0) throw this.error(exit);
  }

  /** Stops encoding and leaves whatever was written. */
  abort(): void {
    if (!this.exit) this.stream.send({ op: 'kill', id: this.stream.id });
  }

  /**
   * The error once ffmpeg has exited: a broken pipe (EPIPE) only says that ffmpeg stopped reading,
   * its stderr says why. ffmpeg reports a full disk by the strerror text of ENOSPC.
   */
  private error(exit: Extract<PipeEvent, { op: 'exit' }>): Error {
    const stderr = exit.stderr.trim();
    const failed = exit.error ? Object.assign(new Error(exit.error.message), { code: exit.error.code }) : undefined;
    const detail = stderr.split('\n')[0] || failed?.message || `ffmpeg exited with code ${exit.code}`;
    // The whole of ffmpeg's complaint rides along as the cause: its reason may be on a later line.
    const error = new Error(`overlay video encoding failed: ${detail}`, { cause: stderr ? new Error(stderr) : failed });
    return NO_SPACE.test(stderr) ? DiskFullError.writeFailed(error) : error;
  }
}

/** The frame's bytes as an ArrayBuffer of their own, to transfer (a copy if they share one). */
function transferable(data: Buffer): ArrayBuffer {
  if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer) return data.buffer;
  return new Uint8Array(data).buffer as ArrayBuffer;
}
