// A clip of vtest.avi whose quietest frame is known: the scene's empty background (the per-pixel
// median of frames spread over the whole video, which removes the pedestrians) stands in for one
// frame of a run of real frames, each of which has pedestrians. For the reference refresh tests.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import cv from '../lib/video/opencv.js';
import { perPixelMedian } from '../lib/kamcheck/pixel-median.js';
import { VTEST_AVI } from './opencv-data.js';

export interface QuietClip {
  /** H.264 MP4 of `frames.length` frames. */
  clip: string;
  /** The empty scene as a JPEG: a reference the clip matches. */
  background: string;
  /** The frames as encoded (BGR, full size); frames[quiet] is the background. */
  frames: cv.Mat[];
  /** The frame that is the empty scene; null when every frame has pedestrians. */
  quiet: number | null;
}

/** Frames 0..FRAMES_READ-1 of vtest.avi at one size, decoded once per process. */
const FRAMES_READ = 400;
const decoded = new Map<string, cv.Mat[]>();

/** vtest.avi frames `first`, `first + step`, ... scaled to `width` x `height`. */
function vtestFrames(first: number, step: number, count: number, width: number, height: number): cv.Mat[] {
  const key = `${width}x${height}`;
  if (!decoded.has(key)) {
    const cap = new cv.VideoCapture(VTEST_AVI);
    const all: cv.Mat[] = [];
    try {
      while (all.length < FRAMES_READ) {
        const frame = cap.read();
        if (!frame || frame.empty) throw new Error('vtest.avi is shorter than the test needs');
        all.push(frame.resize(height, width, 0, 0, cv.INTER_AREA));
        frame.release();
      }
    } finally {
      cap.release();
    }
    decoded.set(key, all);
  }
  return Array.from({ length: count }, (_, i) => decoded.get(key)![first + i * step]);
}

const backgrounds = new Map<string, cv.Mat>();

/**
 * `count` frames of vtest.avi, 4 frames apart (pedestrians move between them), with the empty
 * scene in place of frame `quiet` (none when null); written under `dir`.
 */
export function makeQuietClip(dir: string, { count = 9, quiet = 5 as number | null, width = 640, height = 480 } = {}): QuietClip {
  fs.mkdirSync(dir, { recursive: true });
  // 31 frames over the first 37 s: every pixel shows the floor in most of them
  const key = `${width}x${height}`;
  if (!backgrounds.has(key)) backgrounds.set(key, perPixelMedian(vtestFrames(0, 12, 31, width, height)));
  const background = backgrounds.get(key)!;
  const frames = vtestFrames(250, 4, count, width, height);
  if (quiet !== null) frames[quiet] = background;
  const frameDir = path.join(dir, 'frames');
  fs.mkdirSync(frameDir, { recursive: true });
  frames.forEach((f, i) => cv.imwrite(path.join(frameDir, `${String(i).padStart(3, '0')}.png`), f));
  const clip = path.join(dir, 'quiet.mp4');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-framerate', '10', '-i', path.join(frameDir, '%03d.png'), '-c:v', 'libx264', '-crf', '18', '-pix_fmt', 'yuv420p', clip]);
  const backgroundFile = path.join(dir, 'background.jpg');
  cv.imwrite(backgroundFile, background, [cv.IMWRITE_JPEG_QUALITY, 95]);
  return { clip, background: backgroundFile, frames, quiet };
}
