// Encodes BGR frames to H.264 MP4 through the ffmpeg CLI (raw frames on stdin).
import { spawn } from 'node:child_process';
import cv from '../../lib/video/opencv.js';

export interface EncodeOptions {
  crf: number;
  fps?: number;
  /** x264 preset; fixtures favour speed, the CRF sets the quality. */
  preset?: string;
}

export function encodeH264(frames: cv.Mat[], outPath: string, opts: EncodeOptions): Promise<void> {
  const { cols: w, rows: h } = frames[0];
  const args = [
    '-v', 'error', '-y',
    '-f', 'rawvideo', '-pix_fmt', 'bgr24', '-s', `${w}x${h}`, '-r', String(opts.fps ?? 25), '-i', '-',
    '-c:v', 'libx264', '-preset', opts.preset ?? 'veryfast', '-crf', String(opts.crf),
    '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-threads', '1',
    outPath,
  ];
  return new Promise((resolve, reject) => {
    const ff = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    ff.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    ff.on('error', reject);
    ff.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr.trim()}`))));
    ff.stdin.on('error', () => undefined); // reported through 'close'
    for (const f of frames) ff.stdin.write(f.getData());
    ff.stdin.end();
  });
}
