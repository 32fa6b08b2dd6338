// What a camera shows at night, as effects on a daytime picture: less light that the camera's gain
// makes up for in part (a darker, flatter, less colourful picture with the noise of high gain), the
// switch to infrared (monochrome, lit by the camera's own illuminator, which falls off towards the
// edges), and the lights of the night: headlights sweeping through, street lamps switching on,
// rain or snow caught in the light. The sensor noise itself is added by the case renderer.
import cv from '../../lib/video/opencv.js';
import { Prng } from './prng.js';
import { applyLuts, gainLut, gammaLut, rain, solid } from './effects.js';

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

/** How deep into the night: `low` is about half the day's brightness, `dark` about a third. */
export type NightDepth = 'low' | 'dark';

/** A night look drawn once per clip, and the sensor noise that comes with its gain. */
export interface NightLook {
  apply: (frame: cv.Mat) => cv.Mat;
  /** Sensor noise, grey levels per pixel and channel at the output size. */
  noiseSigma: number;
}

/**
 * Less light, made up for in part by gain: the brightness falls to `brightness` of the day's (a
 * darker gamma takes the unlit parts down further), colour fades as the camera turns its
 * saturation down at high gain, and the light turns warm (sodium lamps) or stays white (LED).
 */
export function nightLook(rng: Prng, depth: NightDepth, params: Record<string, number | string>): NightLook {
  const brightness = depth === 'low' ? rng.uniform(0.42, 0.6) : rng.uniform(0.28, 0.38);
  const gamma = rng.uniform(1.0, 1.3);
  const saturation = rng.uniform(0.25, 0.7);
  const warm = rng.next() < 0.5 ? rng.uniform(0.04, 0.12) : 0;
  const noiseSigma = depth === 'low' ? rng.uniform(4, 8) : rng.uniform(8, 14);
  params.brightness = round(brightness);
  params.gamma = round(gamma);
  params.saturation = round(saturation);
  params.warm = round(warm);
  params.noiseSigma = round(noiseSigma, 2);
  const curve = gammaLut(gamma);
  // the gamma darkens mid-grey by (0.5^gamma)/0.5; the gain makes the mean land near `brightness`
  const gain = brightness / Math.pow(0.5, gamma - 1);
  const channel = (g: number) => {
    const t = gainLut(gain * g);
    return Uint8Array.from(curve, (v) => t[v]);
  };
  const luts: [Uint8Array, Uint8Array, Uint8Array] = [channel(1 - warm), channel(1), channel(1 + warm)];
  return { apply: (f) => desaturate(applyLuts(f, luts), saturation), noiseSigma };
}

/** Mixes a picture towards its own grey: `saturation` 1 keeps it, 0 makes it monochrome. */
export function desaturate(frame: cv.Mat, saturation: number): cv.Mat {
  const grey = frame.bgrToGray().cvtColor(cv.COLOR_GRAY2BGR);
  return frame.addWeighted(saturation, grey, 1 - saturation, 0);
}

/** A picture's grey made three-channel again: what an infrared camera sends. */
export function monochrome(frame: cv.Mat): cv.Mat {
  return frame.bgrToGray().cvtColor(cv.COLOR_GRAY2BGR);
}

/**
 * The switch to infrared: the picture turns monochrome, with its own grey mix (red and near
 * infrared reflect alike, foliage brighter), its own contrast curve, and the light of the camera's
 * illuminator, strongest at the centre and falling off towards the corners.
 */
export function irSwitch(rng: Prng, W: number, H: number, params: Record<string, number | string>): NightLook {
  const corner = rng.uniform(0.35, 0.65);
  const gain = rng.uniform(0.7, 1.1);
  const gamma = rng.next() < 0.5 ? rng.uniform(0.7, 0.9) : rng.uniform(1.1, 1.4);
  const noiseSigma = rng.uniform(3, 8);
  params.corner = round(corner);
  params.gain = round(gain);
  params.gamma = round(gamma);
  params.noiseSigma = round(noiseSigma, 2);
  const falloff = radialFalloff(W, H, corner, gain);
  const curve = gammaLut(gamma);
  return {
    apply: (f) => {
      const [b, g, r] = f.splitChannels();
      const grey = b.addWeighted(0.15, g.addWeighted(0.35 / 0.85, r, 0.5 / 0.85, 0), 0.85, 0);
      const lit = grey.cvtColor(cv.COLOR_GRAY2BGR).convertTo(cv.CV_32FC3).hMul(falloff).convertTo(cv.CV_8UC3);
      return applyLuts(lit, [curve, curve, curve]);
    },
    noiseSigma,
  };
}

/** A CV_32FC3 map: `gain` at the centre, `gain * corner` in the corners, falling off with the squared radius. */
function radialFalloff(W: number, H: number, corner: number, gain: number): cv.Mat {
  const w = Math.max(16, Math.round(W / 8));
  const h = Math.max(12, Math.round(H / 8));
  const buf = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const r2 = ((x + 0.5) / w - 0.5) ** 2 * 4 * 0.5 + ((y + 0.5) / h - 0.5) ** 2 * 4 * 0.5; // 1 in the corners
      const v = Math.round(100 * gain * (1 - (1 - corner) * r2));
      buf.fill(Math.max(0, Math.min(255, v)), 3 * (y * w + x), 3 * (y * w + x) + 3);
    }
  }
  return new cv.Mat(buf, h, w, cv.CV_8UC3).resize(H, W, 0, 0, cv.INTER_LINEAR).convertTo(cv.CV_32FC3, 1 / 100);
}

/** A light: a saturated core, a halo around it, and the pool of light it throws on the scene. */
interface Light {
  x: number;
  y: number;
  /** Core radius, px. */
  radius: number;
  /** Colour of the core and halo (B, G, R). */
  colour: [number, number, number];
}

/** Adds lights to a frame: the scene brightened in a wide pool around each, then a glowing core. */
function drawLights(frame: cv.Mat, lights: Light[], W: number, H: number, pool: number): cv.Mat {
  if (lights.length === 0) return frame;
  const w = Math.max(16, Math.round(W / 8));
  const h = Math.max(12, Math.round(H / 8));
  // the pool: a multiplicative map at 1/8 size, 1 far away, 1 + pool under the light
  const pools = solid(h, w, [0, 0, 0]);
  const glow = solid(H, W, [0, 0, 0]);
  for (const l of lights) {
    const v = Math.round(255 * Math.min(1, pool / 3));
    pools.drawEllipse(new cv.RotatedRect(new cv.Point2(l.x / 8, (l.y + 3 * l.radius) / 8), new cv.Size((12 * l.radius) / 8, (8 * l.radius) / 8), 0), new cv.Vec3(v, v, v), -1);
    glow.drawCircle(new cv.Point2(Math.round(l.x), Math.round(l.y)), Math.max(1, Math.round(l.radius)), new cv.Vec3(...l.colour), -1);
  }
  const poolMap = pools.gaussianBlur(new cv.Size(0, 0), (1.5 * lights[0].radius) / 8 + 1).resize(H, W, 0, 0, cv.INTER_LINEAR).convertTo(cv.CV_32FC3, 3 / 255, 1);
  const lit = frame.convertTo(cv.CV_32FC3).hMul(poolMap).convertTo(cv.CV_8UC3);
  const halo = glow.gaussianBlur(new cv.Size(0, 0), Math.max(1, 1.5 * lights[0].radius));
  return lit.add(halo).add(glow.gaussianBlur(new cv.Size(0, 0), Math.max(0.7, 0.3 * lights[0].radius)));
}

/** A car's headlights sweeping across the view during the clip, lighting the ground ahead of them. */
export function headlights(rng: Prng, W: number, H: number, params: Record<string, number | string>): (f: cv.Mat, t: number) => cv.Mat {
  const y = rng.uniform(0.55, 0.85) * H;
  const radius = rng.uniform(0.012, 0.025) * W;
  const gap = rng.uniform(4, 7) * radius;
  const dir = rng.sign();
  const x0 = dir > 0 ? rng.uniform(-0.2, 0.3) * W : rng.uniform(0.7, 1.2) * W;
  const speed = dir * rng.uniform(0.02, 0.05) * W;
  const pool = rng.uniform(0.8, 2);
  params.y = round(y / H);
  params.speed = round(speed / W);
  params.pool = round(pool);
  return (f, t) => {
    const x = x0 + speed * t;
    const colour: [number, number, number] = [255, 250, 240];
    return drawLights(f, [{ x, y, radius, colour }, { x: x + gap, y, radius, colour }], W, H, pool);
  };
}

/** Street lamps: some already lit, the others switching on during the clip, each with its pool of light. */
export function lampsOn(rng: Prng, W: number, H: number, frames: number, params: Record<string, number | string>): (f: cv.Mat, t: number) => cv.Mat {
  const count = rng.int(1, 3);
  const radius = rng.uniform(0.006, 0.015) * W;
  const sodium = rng.next() < 0.5;
  const colour: [number, number, number] = sodium ? [90, 190, 255] : [235, 245, 255];
  const lamps = Array.from({ length: count }, () => ({
    light: { x: rng.uniform(0.1, 0.9) * W, y: rng.uniform(0.08, 0.45) * H, radius, colour } as Light,
    on: rng.int(-frames, frames - 1),
  }));
  const pool = rng.uniform(0.6, 1.6);
  params.lamps = count;
  params.switchedDuringClip = lamps.filter((l) => l.on > 0).length;
  params.pool = round(pool);
  return (f, t) => drawLights(f, lamps.filter((l) => t >= l.on).map((l) => l.light), W, H, pool);
}

/** Rain or snow lit by the night's lights: streaks or flakes, new ones every frame. */
export function nightPrecipitation(rng: Prng, W: number, H: number, params: Record<string, number | string>): (f: cv.Mat) => cv.Mat {
  const snow = rng.next() < 0.5;
  params.precipitation = snow ? 'snow' : 'rain';
  const density = rng.uniform(0.2, 0.6);
  params.density = round(density);
  const fall = rng.fork(11);
  if (!snow) {
    const slant = rng.uniform(-20, 20);
    const strength = rng.uniform(0.3, 0.6);
    return (f) => rain(f, fall, density, slant, strength);
  }
  const size = Math.max(1, Math.round(W / 640));
  return (f) => {
    const flakes = solid(H, W, [0, 0, 0]);
    const count = Math.round((density * W * H) / 2000);
    for (let i = 0; i < count; i++) {
      const v = fall.uniform(140, 240);
      flakes.drawCircle(new cv.Point2(Math.round(fall.uniform(0, W)), Math.round(fall.uniform(0, H))), Math.round(size * fall.uniform(0.5, 2)), new cv.Vec3(v, v, v), -1, cv.LINE_AA);
    }
    return f.add(flakes.gaussianBlur(new cv.Size(0, 0), Math.max(0.6, W / 1280)));
  };
}
