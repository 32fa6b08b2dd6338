// Where fixture pictures come from: real footage (vtest.avi, a static camera with pedestrians) and
// stills made live with sensor noise and synthetic walkers; and how a camera "view" of a source is
// rendered at the output resolution (crop + rotation, so a moved camera shows no black borders).
import cv from '../../lib/video/opencv.js';
import { OPENCV_DATA_DIR, VTEST_AVI } from '../opencv-data.js';
import { Prng } from './prng.js';

export const VTEST_FRAMES = 795;
/** Frames of vtest.avi with the fewest pedestrians (foreground ~0.6-1% of pixels vs 2-4% elsewhere). */
export const VTEST_QUIET = [395, 425] as const;
/** Frames of vtest.avi with the most pedestrians (foreground 3-3.6% of pixels). */
export const VTEST_BUSY = [495, 650] as const;

export const STILL_SCENES = ['building.jpg', 'aero1.jpg', 'leuvenA.jpg', 'home.jpg', 'aero3.jpg', 'box_in_scene.png'] as const;
/** Pictures used as the printed/patterned surface of a textured mask. */
export const MASK_TEXTURES = ['fruits.jpg', 'baboon.jpg', 'starry_night.jpg', 'orange.jpg', 'stuff.jpg'] as const;

const imageCache = new Map<string, cv.Mat>();

export function loadStill(name: string): cv.Mat {
  let img = imageCache.get(name);
  if (!img) {
    img = cv.imread(`${OPENCV_DATA_DIR}/${name}`, cv.IMREAD_COLOR);
    imageCache.set(name, img);
  }
  return img;
}

/** Decodes the listed frames of vtest.avi (one sequential pass; the AVI does not seek reliably). */
export function loadVtestFrames(wanted: Set<number>): Map<number, cv.Mat> {
  const frames = new Map<number, cv.Mat>();
  if (wanted.size === 0) return frames;
  const last = Math.max(...wanted);
  const cap = new cv.VideoCapture(VTEST_AVI);
  try {
    for (let i = 0; i <= last; i++) {
      const frame = cap.read();
      if (!frame || frame.empty) break;
      if (wanted.has(i)) frames.set(i, frame);
    }
  } finally {
    cap.release();
  }
  return frames;
}

/** A pedestrian-like blob walking over a still, in source pixels. */
export interface Walker {
  x: number;
  y: number;
  vx: number;
  vy: number;
  height: number;
  body: [number, number, number];
  head: [number, number, number];
}

export function randomWalkers(rng: Prng, count: number, srcW: number, srcH: number): Walker[] {
  const walkers: Walker[] = [];
  for (let i = 0; i < count; i++) {
    const height = rng.uniform(0.12, 0.26) * srcH;
    const speed = rng.uniform(0.004, 0.012) * srcW;
    const dir = rng.uniform(0, 2 * Math.PI);
    const shade = rng.uniform(20, 200);
    walkers.push({
      x: rng.uniform(0.1, 0.9) * srcW,
      y: rng.uniform(0.25, 0.85) * srcH,
      vx: speed * Math.cos(dir),
      vy: 0.4 * speed * Math.sin(dir),
      height,
      body: [shade * rng.uniform(0.6, 1.3), shade * rng.uniform(0.6, 1.3), shade * rng.uniform(0.6, 1.3)],
      head: [rng.uniform(60, 140), rng.uniform(90, 170), rng.uniform(140, 220)],
    });
  }
  return walkers;
}

/** The still with the walkers at clip time t (frame index). */
export function drawWalkers(still: cv.Mat, walkers: Walker[], t: number): cv.Mat {
  if (walkers.length === 0) return still;
  const out = still.copy();
  for (const w of walkers) {
    const x = w.x + w.vx * t;
    const y = w.y + w.vy * t;
    const bodyH = w.height * 0.8;
    out.drawEllipse(
      new cv.Point2(x, y),
      new cv.Size(Math.max(2, w.height * 0.16), Math.max(3, bodyH / 2)),
      0,
      0,
      360,
      new cv.Vec3(...w.body),
      -1,
      cv.LINE_AA,
    );
    out.drawCircle(new cv.Point2(x, y - bodyH / 2 - w.height * 0.08), Math.max(2, w.height * 0.09), new cv.Vec3(...w.head), -1, cv.LINE_AA);
  }
  return out;
}

/** How the camera looks at its source: centre and rotation of the crop, width of the crop, in source pixels. */
export interface View {
  cx: number;
  cy: number;
  angleDeg: number;
  cropW: number;
}

/** 0.8: the fixed view uses 80% of the source, leaving room to move the camera without borders. */
const VIEW_FILL = 0.8;

export function centredView(srcW: number, srcH: number, outW: number, outH: number): View {
  const cropW = VIEW_FILL * Math.min(srcW, (srcH * outW) / outH);
  return { cx: srcW / 2, cy: srcH / 2, angleDeg: 0, cropW };
}

/** True when every output corner of the view lies inside the source. */
export function viewFits(view: View, srcW: number, srcH: number, outW: number, outH: number): boolean {
  const s = view.cropW / outW;
  const a = (view.angleDeg * Math.PI) / 180;
  for (const [u, v] of [[-1, -1], [1, -1], [-1, 1], [1, 1]]) {
    const dx = (u * outW * s) / 2;
    const dy = (v * outH * s) / 2;
    const x = view.cx + Math.cos(a) * dx - Math.sin(a) * dy;
    const y = view.cy + Math.sin(a) * dx + Math.cos(a) * dy;
    if (x < 0 || y < 0 || x > srcW - 1 || y > srcH - 1) return false;
  }
  return true;
}

/** Renders the view of `src` at outW x outH (area-averaged when shrinking, like a real sensor). */
export function renderView(src: cv.Mat, view: View, outW: number, outH: number): cv.Mat {
  let scale = view.cropW / outW; // source pixels per output pixel
  let img = src;
  let cx = view.cx;
  let cy = view.cy;
  if (scale > 1.2) {
    const w = Math.round(src.cols / scale);
    const h = Math.round(src.rows / scale);
    img = src.resize(h, w, 0, 0, cv.INTER_AREA);
    cx *= w / src.cols;
    cy *= h / src.rows;
    scale *= w / src.cols;
  }
  const a = (view.angleDeg * Math.PI) / 180;
  const m00 = scale * Math.cos(a);
  const m10 = scale * Math.sin(a);
  const tx = cx - m00 * (outW / 2) + m10 * (outH / 2);
  const ty = cy - m10 * (outW / 2) - m00 * (outH / 2);
  const m = new cv.Mat([[m00, -m10, tx], [m10, m00, ty]], cv.CV_64F);
  return img.warpAffine(m, new cv.Size(outW, outH), cv.INTER_LINEAR + cv.WARP_INVERSE_MAP, cv.BORDER_REFLECT_101);
}

/**
 * Gaussian sensor noise, drawn once per output size into a few uint8 fields (128 + 32 z) and reused
 * at random offsets: generating 6 M normal samples per 1080p frame in JavaScript would dominate.
 */
export class NoiseBank {
  private static readonly FIELDS = 4;
  private static readonly MARGIN = 16;
  private static readonly FIELD_SIGMA = 32;
  private readonly fields = new Map<string, cv.Mat[]>();

  constructor(private readonly rng: Prng) {}

  /** frame + sigma * N(0,1) per pixel and channel, saturated to 0..255. */
  addNoise(frame: cv.Mat, sigma: number, rng: Prng): cv.Mat {
    if (sigma <= 0) return frame;
    const fields = this.fieldsFor(frame.cols, frame.rows);
    const field = rng.pick(fields);
    const region = field.getRegion(new cv.Rect(rng.int(0, NoiseBank.MARGIN), rng.int(0, NoiseBank.MARGIN), frame.cols, frame.rows));
    const beta = sigma / NoiseBank.FIELD_SIGMA;
    return frame.addWeighted(1, region, beta, -128 * beta);
  }

  /** Draws the fields of each size in this order (as first use would), so that a case drawn alone gets the same noise as in its set. */
  prepare(sizes: [number, number][]): void {
    for (const [w, h] of sizes) this.fieldsFor(w, h);
  }

  private fieldsFor(w: number, h: number): cv.Mat[] {
    const key = `${w}x${h}`;
    let fields = this.fields.get(key);
    if (!fields) {
      fields = [];
      const fw = w + NoiseBank.MARGIN;
      const fh = h + NoiseBank.MARGIN;
      for (let f = 0; f < NoiseBank.FIELDS; f++) {
        const buf = Buffer.alloc(fw * fh * 3);
        for (let i = 0; i < buf.length; i++) {
          const v = 128 + NoiseBank.FIELD_SIGMA * this.rng.gaussian();
          buf[i] = v < 0 ? 0 : v > 255 ? 255 : v;
        }
        fields.push(new cv.Mat(buf, fh, fw, cv.CV_8UC3));
      }
      this.fields.set(key, fields);
    }
    return fields;
  }
}
