// What happens to the picture between the scene and the encoder: optics (defocus, a mask in front
// of the lens), exposure and white balance (as look-up tables), weather and shadows.
import cv from '../../lib/video/opencv.js';
import { Prng } from './prng.js';
import { loadStill, MASK_TEXTURES } from './scenes.js';

type Lut = Uint8Array;

/** Applies one 256-entry table per channel (B, G, R). */
export function applyLuts(frame: cv.Mat, luts: [Lut, Lut, Lut]): cv.Mat {
  const data = frame.getData();
  const [b, g, r] = luts;
  for (let i = 0; i < data.length; i += 3) {
    data[i] = b[data[i]];
    data[i + 1] = g[data[i + 1]];
    data[i + 2] = r[data[i + 2]];
  }
  return new cv.Mat(data, frame.rows, frame.cols, cv.CV_8UC3);
}

function lut(fn: (x: number) => number): Lut {
  const t = new Uint8Array(256);
  for (let i = 0; i < 256; i++) t[i] = Math.max(0, Math.min(255, Math.round(fn(i))));
  return t;
}

/**
 * A camera's gain: linear below the knee, highlights rolled off exponentially towards white instead
 * of clipping hard (what auto-exposure of a real camera does with a scene that got brighter).
 */
export function gainLut(gain: number, knee = 190): Lut {
  const room = 255 - knee;
  return lut((x) => {
    const y = x * gain;
    return y <= knee ? y : knee + room * (1 - Math.exp(-(y - knee) / room));
  });
}

/** Over-exposure: gain with hard clipping (the sensor saturates). */
export function clipGainLut(gain: number, lift: number): Lut {
  return lut((x) => x * gain + lift);
}

export function gammaLut(gamma: number): Lut {
  return lut((x) => 255 * Math.pow(x / 255, gamma));
}

/** A picture through JPEG at `quality`: compression's loss of noise and fine detail, without an encoder process. */
export function compressed(picture: cv.Mat, quality: number): cv.Mat {
  return cv.imdecode(cv.imencode('.jpg', picture, [cv.IMWRITE_JPEG_QUALITY, quality]));
}

/**
 * `frames` moved `by` px right and half that down at the working size (320 px wide), by whole
 * pixels of the clip so that nothing is resampled, the uncovered edge mirrored: a camera bumped a
 * little, or a PTZ camera back at its preset slightly off.
 */
export function nudged(frames: cv.Mat[], by: number): cv.Mat[] {
  if (by === 0) return frames;
  const px = frames[0].cols / 320;
  const shift = new cv.Mat([[1, 0, Math.round(by * px)], [0, 1, Math.round((by / 2) * px)]], cv.CV_64F);
  return frames.map((f) => f.warpAffine(shift, new cv.Size(f.cols, f.rows), cv.INTER_NEAREST, cv.BORDER_REFLECT_101));
}

/** Gaussian defocus; large sigmas are done at a reduced size (same result, 10x faster at 1080p). */
export function defocus(frame: cv.Mat, sigma: number): cv.Mat {
  const k = Math.floor(sigma / 3);
  if (k < 2) return frame.gaussianBlur(new cv.Size(0, 0), sigma, sigma, cv.BORDER_REFLECT_101);
  const small = frame.resize(Math.round(frame.rows / k), Math.round(frame.cols / k), 0, 0, cv.INTER_AREA);
  const s = Math.sqrt(Math.max(0.25, (sigma / k) ** 2 - 0.25)); // the area resize already averaged ~k px
  return small.gaussianBlur(new cv.Size(0, 0), s, s, cv.BORDER_REFLECT_101).resize(frame.rows, frame.cols, 0, 0, cv.INTER_LINEAR);
}

/** An axis-aligned region covering `area` of the frame, touching one of its edges (a sticker, a sheet, a branch). */
export interface MaskRect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function randomMaskRect(rng: Prng, W: number, H: number, area: number): MaskRect {
  const aspect = rng.uniform(0.6, 1.6);
  let w = Math.min(W, Math.sqrt(area * W * H * aspect * (W / H)) );
  let h = Math.min(H, (area * W * H) / w);
  w = Math.min(W, (area * W * H) / h);
  const edge = rng.int(0, 3);
  let x = rng.uniform(0, W - w);
  let y = rng.uniform(0, H - h);
  if (edge === 0) x = 0;
  if (edge === 1) x = W - w;
  if (edge === 2) y = 0;
  if (edge === 3) y = H - h;
  return { x: Math.round(x), y: Math.round(y), w: Math.round(w), h: Math.round(h) };
}

/**
 * A uniform BGR picture. Built from a Buffer: the binding's fill-value constructor is very slow on
 * large Mats (a 1280x720 fill took ~0.5 s).
 */
export function solid(rows: number, cols: number, bgr: [number, number, number]): cv.Mat {
  const buf = Buffer.alloc(rows * cols * 3);
  const [b, g, r] = bgr.map((v) => Math.max(0, Math.min(255, Math.round(v))));
  for (let i = 0; i < buf.length; i += 3) {
    buf[i] = b;
    buf[i + 1] = g;
    buf[i + 2] = r;
  }
  return new cv.Mat(buf, rows, cols, cv.CV_8UC3);
}

/** A static occluder in front of the lens: what it looks like, and how much it hides of each pixel. */
export interface Occluder {
  overlay: cv.Mat;
  /** CV_32FC3, 1 where the occluder hides the scene completely. */
  alpha: cv.Mat;
}

/** A flat-coloured (or printed/patterned) rect; its edge is soft because it is close to the lens. */
export function rectOccluder(W: number, H: number, rect: MaskRect, rng: Prng, textured: boolean, edgeSigma: number): Occluder {
  let overlay: cv.Mat;
  if (textured) {
    const tex = loadStill(rng.pick(MASK_TEXTURES));
    const zoom = rng.uniform(0.8, 1.6);
    const scale = Math.max((rect.w * zoom) / tex.cols, (rect.h * zoom) / tex.rows);
    const patch = tex.resize(Math.max(rect.h, Math.round(tex.rows * scale)), Math.max(rect.w, Math.round(tex.cols * scale)));
    overlay = solid(H, W, [0, 0, 0]);
    patch.getRegion(new cv.Rect(0, 0, rect.w, rect.h)).copyTo(overlay.getRegion(new cv.Rect(rect.x, rect.y, rect.w, rect.h)));
  } else {
    overlay = solid(H, W, [rng.uniform(0, 255), rng.uniform(0, 255), rng.uniform(0, 255)]);
  }
  const mask8 = solid(H, W, [0, 0, 0]);
  mask8.drawRectangle(new cv.Point2(rect.x, rect.y), new cv.Point2(rect.x + rect.w - 1, rect.y + rect.h - 1), new cv.Vec3(255, 255, 255), -1);
  const soft = edgeSigma > 0.5 ? mask8.gaussianBlur(new cv.Size(0, 0), edgeSigma) : mask8;
  return { overlay, alpha: soft.convertTo(cv.CV_32FC3, 1 / 255) };
}

export function occlude(frame: cv.Mat, occ: Occluder): cv.Mat {
  const f = frame.convertTo(cv.CV_32FC3);
  // f + alpha * (overlay - f)
  return f.add(occ.alpha.hMul(occ.overlay.convertTo(cv.CV_32FC3).sub(f))).convertTo(cv.CV_8UC3);
}

/** A lens fully covered: a blurry hand/cloth (flat, dim, soft light leak) or a close-up printed surface. */
export function fullCover(W: number, H: number, rng: Prng, textured: boolean): cv.Mat {
  if (textured) {
    const tex = loadStill(rng.pick(MASK_TEXTURES));
    return tex.resize(H, W).gaussianBlur(new cv.Size(0, 0), rng.uniform(0, 0.004) * W + 0.1);
  }
  // drawn and blurred at 1/8 size, then enlarged: a 0.08-width blur at full size takes seconds
  const w = Math.max(8, Math.round(W / 8));
  const h = Math.max(6, Math.round(H / 8));
  const base = rng.uniform(20, 200);
  const tint: [number, number, number] = [base * rng.uniform(0.7, 1.1), base * rng.uniform(0.8, 1.1), base * rng.uniform(0.9, 1.3)];
  const img = solid(h, w, tint);
  const leak = tint.map((v) => Math.min(255, v * 1.3)) as [number, number, number];
  img.drawCircle(new cv.Point2(rng.uniform(0, w), rng.uniform(0, h)), Math.round(rng.uniform(0.2, 0.5) * w), new cv.Vec3(...leak), -1);
  return img.gaussianBlur(new cv.Size(0, 0), 0.08 * w).resize(H, W, 0, 0, cv.INTER_CUBIC);
}

/** Soft dark regions (building or tree shade): a multiplicative map, 1 outside, 1 - depth inside. */
export function shadowMap(rng: Prng, W: number, H: number, depth: number): cv.Mat {
  const m = solid(H, W, [255, 255, 255]);
  const blobs = rng.int(1, 3);
  for (let i = 0; i < blobs; i++) {
    const pts = [];
    const cx = rng.uniform(0.1, 0.9) * W;
    const cy = rng.uniform(0.1, 0.9) * H;
    const r = rng.uniform(0.15, 0.35) * W;
    for (let k = 0; k < 7; k++) {
      const a = (k / 7) * 2 * Math.PI;
      const rr = r * rng.uniform(0.6, 1.2);
      pts.push(new cv.Point2(Math.round(cx + rr * Math.cos(a)), Math.round(cy + 0.7 * rr * Math.sin(a))));
    }
    m.drawFillPoly([pts], new cv.Vec3(...([1, 1, 1].map(() => 255 * (1 - depth)) as [number, number, number])));
  }
  return m.gaussianBlur(new cv.Size(0, 0), 0.03 * W).convertTo(cv.CV_32FC3, 1 / 255);
}

export function applyShadow(frame: cv.Mat, map: cv.Mat): cv.Mat {
  return frame.convertTo(cv.CV_32FC3).hMul(map).convertTo(cv.CV_8UC3);
}

/** Rain: thin bright slanted streaks (motion-blurred drops), new ones every frame. */
export function rain(frame: cv.Mat, rng: Prng, density: number, slantDeg: number, strength: number): cv.Mat {
  const W = frame.cols;
  const H = frame.rows;
  const streaks = solid(H, W, [0, 0, 0]);
  const count = Math.round((density * W * H) / 1000);
  const a = (slantDeg * Math.PI) / 180;
  const thickness = Math.max(1, Math.round(W / 900));
  for (let i = 0; i < count; i++) {
    const len = rng.uniform(0.03, 0.08) * H;
    const x = rng.uniform(0, W);
    const y = rng.uniform(0, H);
    const v = rng.uniform(120, 220);
    streaks.drawLine(new cv.Point2(x, y), new cv.Point2(x + len * Math.sin(a), y + len * Math.cos(a)), new cv.Vec3(v, v, v), thickness, cv.LINE_AA);
  }
  const soft = streaks.gaussianBlur(new cv.Size(0, 0), Math.max(0.5, W / 1280));
  return frame.addWeighted(1, soft, strength, 0);
}
