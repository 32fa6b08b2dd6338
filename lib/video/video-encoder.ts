// H.264 MP4 encoding by an ffmpeg child process fed raw I420 frames through a pipe: the encoder
// runs on another core than the analysis. The moov atom is moved to the front (+faststart) so a
// browser can start playing the file before it has downloaded all of it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { YuvFrame } from './yuv-frame.js';

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

export class VideoEncoder {
  private readonly child;
  private stderr = '';
  private readonly exited: Promise<number | null>;
  private failed: Error | null = null;

  constructor(
    readonly file: string,
    private readonly options: VideoEncoderOptions,
  ) {
    const { width, height } = options;
    const fps = options.fps > 0 && options.fps <= 240 ? options.fps : 25;
    const args = [
      '-v', 'error', '-y',
      '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-r', String(fps), '-i', 'pipe:0',
      '-c:v', 'libx264', '-preset', X264_PRESET, '-crf', X264_CRF, '-pix_fmt', 'yuv420p',
      '-movflags', '+faststart', '-f', 'mp4', file,
    ];
    this.child = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => {
      if (this.stderr.length < 4000) this.stderr += d;
    });
    this.child.on('error', (err) => (this.failed = err));
    this.child.stdin.on('error', (err) => (this.failed ??= err));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /**
   * Queues one frame (its buffer is handed over, not copied: do not change it afterwards); waits
   * when ffmpeg is behind, so at most a pipe's worth is buffered.
   */
  async write(frame: YuvFrame): Promise<void> {
    if (this.failed) throw await this.exitError();
    if (frame.width !== this.options.width || frame.height !== this.options.height) {
      throw new Error(`frame is ${frame.width}x${frame.height}, the video is ${this.options.width}x${this.options.height}`);
    }
    try {
      if (!this.child.stdin.write(frame.data)) await once(this.child.stdin, 'drain');
    } catch (err) {
      this.failed ??= err as Error;
      throw await this.exitError();
    }
  }

  /** Ends the stream and waits for the file to be complete. */
  async finish(): Promise<void> {
    this.child.stdin.end();
    const code = await this.exited;
    if (this.failed || code !== 0) throw this.error();
  }

  /**
   * The error once ffmpeg has exited: a broken pipe (EPIPE) only says that ffmpeg stopped reading,
   * its stderr says why (e.g. "No space left on device", which disk-space.ts recognises).
   */
  private async exitError(): Promise<Error> {
    await this.exited;
    return this.error();
  }

  /** Stops encoding and leaves whatever was written. */
  abort(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }

  private error(): Error {
    const detail = this.stderr.trim().split('\n')[0] || this.failed?.message || 'ffmpeg failed';
    // The whole of ffmpeg's complaint rides along as the cause: its reason may be on a later line.
    return new Error(`overlay video encoding failed: ${detail}`, { cause: this.stderr.trim() ? new Error(this.stderr.trim()) : this.failed ?? undefined });
  }
}
