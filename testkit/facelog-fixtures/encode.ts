// H.264 MP4 through the ffmpeg CLI, frames streamed to its stdin as they are drawn: a 1080p fixture
// of 300 frames would take 1.9 GB held in memory before encoding. ffmpeg encodes on the other core
// while the next frame is drawn.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import cv from '../../lib/video/opencv.js';

export interface H264Options {
  crf: number;
  fps: number;
  /** x264 preset; fixtures favour speed, the CRF sets the quality. */
  preset?: string;
}

export class H264Writer {
  private readonly child;
  private stderr = '';
  private failed: Error | undefined;
  private readonly exited: Promise<number | null>;

  constructor(
    readonly file: string,
    readonly width: number,
    readonly height: number,
    opts: H264Options,
  ) {
    const args = [
      '-v', 'error', '-y',
      '-f', 'rawvideo', '-pix_fmt', 'bgr24', '-s', `${width}x${height}`, '-r', String(opts.fps), '-i', 'pipe:0',
      '-c:v', 'libx264', '-preset', opts.preset ?? 'veryfast', '-crf', String(opts.crf),
      '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-threads', '1',
      file,
    ];
    this.child = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => {
      if (this.stderr.length < 4000) this.stderr += d;
    });
    this.child.on('error', (err) => (this.failed ??= err));
    this.child.stdin.on('error', (err) => (this.failed ??= err));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /** Queues a frame; waits while ffmpeg is behind, so at most a pipe's worth is buffered. */
  async write(frame: cv.Mat): Promise<void> {
    if (this.failed) throw this.error();
    if (frame.cols !== this.width || frame.rows !== this.height) throw new Error(`frame is ${frame.cols}x${frame.rows}, the video ${this.width}x${this.height}`);
    if (!this.child.stdin.write(frame.getData())) await Promise.race([once(this.child.stdin, 'drain'), this.exited]); // ffmpeg may die instead
  }

  async finish(): Promise<void> {
    this.child.stdin.end();
    const code = await this.exited;
    if (this.failed || code !== 0) throw this.error();
  }

  private error(): Error {
    return new Error(`ffmpeg failed on ${this.file}: ${this.stderr.trim() || this.failed?.message}`);
  }
}
