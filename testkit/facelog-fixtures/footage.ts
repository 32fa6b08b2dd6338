// The background: real footage of a static camera with pedestrians (opencv-doc's vtest.avi), so the
// face log sees a live scene with motion that is not a face. Frames are kept decoded and played
// back and forth when a fixture is longer than the window.
import cv from '../../lib/video/opencv.js';
import { VTEST_AVI } from '../opencv-data.js';
import { renderView, View } from '../kamcheck-fixtures/scenes.js';
import { Prng } from '../kamcheck-fixtures/prng.js';

/**
 * The first 400 frames (16 s) of vtest.avi: 530 MB decoded, 0.6 s to decode; every fixture takes a
 * window of it. The whole file (795 frames) would double the memory for little more variety.
 */
export const FOOTAGE_FRAMES = 400;
export const VTEST_SIZE = { width: 768, height: 576 } as const;

export class Footage {
  private constructor(private readonly frames: cv.Mat[]) {}

  static load(count = FOOTAGE_FRAMES): Footage {
    const cap = new cv.VideoCapture(VTEST_AVI);
    const frames: cv.Mat[] = [];
    try {
      while (frames.length < count) {
        const f = cap.read();
        if (!f || f.empty) break;
        frames.push(f);
      }
    } finally {
      cap.release();
    }
    if (frames.length === 0) throw new Error(`cannot read ${VTEST_AVI} (Debian package opencv-doc)`);
    return new Footage(frames);
  }

  get length(): number {
    return this.frames.length;
  }

  /** Frame t of a fixture whose background starts at `start`: forwards, then backwards at the end of the footage, and so on. */
  index(start: number, t: number): number {
    const n = this.frames.length;
    const period = 2 * (n - 1);
    const k = (start + t) % period;
    return k < n ? k : period - k;
  }

  frame(start: number, t: number): cv.Mat {
    return this.frames[this.index(start, t)];
  }
}

/** The whole footage width at the output's aspect ratio; for wide outputs, a random band of its height. */
export function cameraView(W: number, H: number, rng: Prng): View {
  const { width: sw, height: sh } = VTEST_SIZE;
  const cropW = Math.min(sw, (sh * W) / H);
  const cropH = (cropW * H) / W;
  return { cx: sw / 2, cy: sh / 2 + rng.uniform(-0.5, 0.5) * (sh - cropH), angleDeg: 0, cropW };
}

export function renderBackground(footage: Footage, start: number, t: number, view: View, W: number, H: number): cv.Mat {
  return renderView(footage.frame(start, t), view, W, H);
}
