// Semi-transparent things between the scene and the lens: grease or petroleum jelly smeared on the
// lens, a mist of spray paint, a fogged window (tampering), and mild atmospheric haze (benign).
// One optical model serves them all: where a film lies (its opacity), a pixel's light goes partly
// straight through and partly through the film, which scatters it: the scene defocused, plus
// veiling glare (the scene's light spread wide over the film, tinted by it, plus ambient light).
// The picture keeps its layout but loses contrast and fine detail, and drifts toward the tint.
import cv from '../../lib/video/opencv.js';
import { Prng } from './prng.js';
import { defocus, solid } from './effects.js';

export interface Film {
  /** CV_32FC3, 0..1 per pixel: the share of the light that passes through the film rather than straight. */
  opacity: cv.Mat;
  /** Defocus sigma of the scene seen through the film, px. */
  scatterSigma: number;
  /** Share of the light through the film that is veiling glare rather than defocused scene, 0..1. */
  glare: number;
  /** Per-channel gain (B, G, R) of the glare over the scene's wide glow: the film's tint. */
  tint: [number, number, number];
  /** Ambient light in the glare, grey levels (a fogged pane lit from outside is brighter than the scene). */
  lift: number;
}

/** 0.08 of the width: the wide glow of a film (light from a bright area spreads over much of the view). */
const GLOW_SIGMA_SHARE = 0.08;

/**
 * The per-frame transform of a film. The glare has no detail, so it is made at 1/8 size; the rest
 * stays 8-bit until the final blend (float operations on a 1080p frame take 20-80 ms each here).
 */
export function filmEffect(film: Film, W: number, H: number): (frame: cv.Mat) => cv.Mat {
  const w = Math.max(8, Math.round(W / 8));
  const h = Math.max(6, Math.round(H / 8));
  const tint = solid(h, w, film.tint.map((t) => 100 * t) as [number, number, number]).convertTo(cv.CV_32FC3, 1 / 100);
  const straight = film.opacity.convertTo(cv.CV_32FC3, -1, 1);
  return (frame) => {
    // intermediates are released at once: a 1080p float picture is 24 MB, and leaving them to the
    // garbage collector grows the generator to gigabytes and makes every allocation fault in fresh pages
    const small = frame.resize(h, w, 0, 0, cv.INTER_AREA).gaussianBlur(new cv.Size(0, 0), (GLOW_SIGMA_SHARE * W) / 8, (GLOW_SIGMA_SHARE * W) / 8, cv.BORDER_REFLECT_101);
    const glare = small.convertTo(cv.CV_32FC3).hMul(tint).convertTo(cv.CV_8UC3, 1, film.lift).resize(H, W, 0, 0, cv.INTER_LINEAR);
    const scattered = film.scatterSigma > 0.3 ? defocus(frame, film.scatterSigma) : frame;
    const through = scattered.addWeighted(1 - film.glare, glare, film.glare, 0);
    glare.release();
    if (scattered !== frame) scattered.release();
    // frame * (1 - opacity) + through * opacity
    const a = frame.convertTo(cv.CV_32FC3);
    const b = through.convertTo(cv.CV_32FC3);
    through.release();
    const a2 = a.hMul(straight);
    a.release();
    const b2 = b.hMul(film.opacity);
    b.release();
    const sum = a2.add(b2);
    a2.release();
    b2.release();
    const out = sum.convertTo(cv.CV_8UC3);
    sum.release();
    return out;
  };
}

/** A grey picture (0..1) as CV_32FC3, from 8-bit grey-level drawing. */
function toOpacity(m8: cv.Mat, scale: number): cv.Mat {
  return m8.convertTo(cv.CV_32FC3, scale / 255);
}

/**
 * The unevenness of a smear: finger strokes leave streaks of more and less grease. A map of
 * 1 - depth..1, drawn at 1/8 size and enlarged (a blur of this size at 1080p takes seconds).
 */
function smudgeTexture(rng: Prng, W: number, H: number, depth: number): cv.Mat {
  const w = Math.max(8, Math.round(W / 8));
  const h = Math.max(6, Math.round(H / 8));
  const m = solid(h, w, [255, 255, 255]);
  const strokes = rng.int(6, 14);
  const a = rng.uniform(0, Math.PI); // strokes of one wipe run roughly one way
  for (let i = 0; i < strokes; i++) {
    const cx = rng.uniform(0, w);
    const cy = rng.uniform(0, h);
    const len = rng.uniform(0.3, 0.9) * w;
    const b = a + rng.uniform(-0.3, 0.3);
    const v = 255 * (1 - depth * rng.uniform(0.5, 1));
    m.drawLine(
      new cv.Point2(cx - (len / 2) * Math.cos(b), cy - (len / 2) * Math.sin(b)),
      new cv.Point2(cx + (len / 2) * Math.cos(b), cy + (len / 2) * Math.sin(b)),
      new cv.Vec3(v, v, v),
      Math.max(1, Math.round(rng.uniform(0.03, 0.08) * w)),
    );
  }
  return m.gaussianBlur(new cv.Size(0, 0), 0.02 * w + 0.8).resize(H, W, 0, 0, cv.INTER_LINEAR);
}

/** A soft-edged blob of smear covering about `area` of the view: a few overlapping ellipses, one side of the view. */
function smearRegion(rng: Prng, W: number, H: number, area: number, edgeSigma: number): cv.Mat {
  const w = Math.max(8, Math.round(W / 8));
  const h = Math.max(6, Math.round(H / 8));
  const m = solid(h, w, [0, 0, 0]);
  const cx = rng.uniform(0.2, 0.8) * w;
  const cy = rng.uniform(0.2, 0.8) * h;
  // ellipses around (cx, cy) whose union is roughly the wanted area
  const blobs = rng.int(2, 4);
  const r = Math.sqrt((area * w * h) / Math.PI) * 0.95;
  for (let i = 0; i < blobs; i++) {
    const ox = i === 0 ? 0 : rng.uniform(-0.5, 0.5) * r;
    const oy = i === 0 ? 0 : rng.uniform(-0.5, 0.5) * r;
    const rr = r * (i === 0 ? 1 : rng.uniform(0.5, 0.8));
    const aspect = rng.uniform(0.7, 1.4);
    m.drawEllipse(
      new cv.RotatedRect(new cv.Point2(cx + ox, cy + oy), new cv.Size(2 * rr * aspect, (2 * rr) / aspect), rng.uniform(0, 180)),
      new cv.Vec3(255, 255, 255),
      -1,
    );
  }
  return m.gaussianBlur(new cv.Size(0, 0), Math.max(0.5, edgeSigma / 8)).resize(H, W, 0, 0, cv.INTER_LINEAR);
}

/** Share of the view where a 0..1 opacity map is at least half its peak. */
export function filmArea(opacity: cv.Mat, peak: number): number {
  const grey = opacity.convertTo(cv.CV_8UC3, 255).bgrToGray().threshold(127 * peak, 255, cv.THRESH_BINARY);
  return grey.countNonZero() / (opacity.rows * opacity.cols);
}

/** Grease or petroleum jelly: a yellowish, glowing, smeared film, light (0.55) to dense (0.95). */
function greaseFilm(rng: Prng, W: number, opacity: cv.Mat): Film {
  const warm = rng.uniform(0, 0.15);
  const gain = rng.uniform(0.9, 1.2);
  return {
    opacity,
    scatterSigma: rng.uniform(0.01, 0.03) * W,
    glare: rng.uniform(0.3, 0.6),
    tint: [gain * (1 - warm), gain, gain * (1 + warm / 2)],
    lift: rng.uniform(10, 40),
  };
}

export function smearedPartial(rng: Prng, W: number, H: number, params: Record<string, number | string>): Film {
  const strength = rng.uniform(0.55, 0.95);
  const area = rng.uniform(0.3, 0.7);
  const region = smearRegion(rng, W, H, area, rng.uniform(0.02, 0.05) * W);
  const opacity = toOpacity(region, strength).hMul(toOpacity(smudgeTexture(rng, W, H, 0.3), 1));
  params.strength = Math.round(strength * 1000) / 1000;
  params.area = Math.round(filmArea(opacity, strength) * 1000) / 1000;
  return greaseFilm(rng, W, opacity);
}

export function smearedFull(rng: Prng, W: number, H: number, params: Record<string, number | string>): Film {
  const strength = rng.uniform(0.55, 0.95);
  const opacity = toOpacity(smudgeTexture(rng, W, H, 0.3), strength);
  params.strength = Math.round(strength * 1000) / 1000;
  return greaseFilm(rng, W, opacity);
}

/**
 * Spray paint from a distance: a cloud of tiny paint droplets, densest where the can pointed, over
 * a thin coat of the paint's colour. The droplets sit on the lens, so they are out of focus too.
 */
export function sprayMist(rng: Prng, W: number, H: number, params: Record<string, number | string>): Film {
  const strength = rng.uniform(0.7, 1);
  // the spray cone: full density at its centre, falling to `edge` of it at the far corner
  const cx = rng.uniform(0.2, 0.8) * W;
  const cy = rng.uniform(0.2, 0.8) * H;
  const edge = rng.uniform(0.6, 0.9);
  const cone = solid(Math.max(6, Math.round(H / 8)), Math.max(8, Math.round(W / 8)), [255 * edge, 255 * edge, 255 * edge]);
  const s = cone.cols / W;
  cone.drawCircle(new cv.Point2(cx * s, cy * s), Math.round(0.6 * Math.hypot(cone.cols, cone.rows)), new cv.Vec3(255, 255, 255), -1);
  const density = cone.gaussianBlur(new cv.Size(0, 0), 0.25 * cone.cols).resize(H, W, 0, 0, cv.INTER_LINEAR);
  // droplets: radius 0.6-2 px at 320 wide; together they cover `coverage` of the view
  const droplets = solid(H, W, [0, 0, 0]);
  const radius = rng.uniform(0.6, 2) * (W / 320);
  const coverage = rng.uniform(0.3, 0.6);
  const count = Math.round((coverage * W * H) / (Math.PI * radius * radius));
  for (let i = 0; i < count; i++) {
    const v = rng.uniform(150, 255);
    droplets.drawCircle(new cv.Point2(rng.uniform(0, W), rng.uniform(0, H)), Math.max(1, Math.round(radius * rng.uniform(0.5, 1.5))), new cv.Vec3(v, v, v), -1);
  }
  const dots = droplets.gaussianBlur(new cv.Size(0, 0), Math.max(0.5, radius * 0.7));
  // a thin coat of 50-70% of the droplets' opacity everywhere the mist reaches, the droplets on top
  const base = rng.uniform(0.5, 0.7);
  const layer = dots.convertTo(cv.CV_8UC3, 1 - base, 255 * base);
  const opacity = toOpacity(density, strength).hMul(toOpacity(layer, 1));
  const paint: [number, number, number] = [rng.uniform(0.2, 1.4), rng.uniform(0.2, 1.4), rng.uniform(0.2, 1.4)];
  params.strength = Math.round(strength * 1000) / 1000;
  params.paint = paint.map((p) => p.toFixed(2)).join('/');
  return { opacity, scatterSigma: rng.uniform(0.004, 0.01) * W, glare: rng.uniform(0.5, 0.8), tint: paint, lift: rng.uniform(10, 40) };
}

/**
 * Condensation on the window in front of the camera: an even veil of bright light over the whole
 * view, a little denser at the bottom or the top, which softens detail slightly (the droplets
 * scatter). `opacity` 0.45 is a light fog, 0.85 a dense one.
 */
export function foggedWindow(rng: Prng, W: number, H: number, params: Record<string, number | string>): Film {
  const strength = rng.uniform(0.45, 0.85);
  const gradient = rng.uniform(-0.1, 0.1);
  const m = solid(H, W, [0, 0, 0]);
  for (let y = 0; y < H; y += 2) {
    const v = 255 * Math.min(1, Math.max(0, strength + gradient * (y / H - 0.5) * 2));
    m.drawLine(new cv.Point2(0, y), new cv.Point2(W - 1, y), new cv.Vec3(v, v, v), 2);
  }
  params.strength = Math.round(strength * 1000) / 1000;
  const blue = rng.uniform(0, 0.08);
  const gain = rng.uniform(0.3, 0.6);
  return {
    opacity: toOpacity(m, 1),
    scatterSigma: rng.uniform(0.004, 0.012) * W,
    glare: rng.uniform(0.75, 0.95),
    tint: [gain * (1 + blue), gain, gain * (1 - blue)],
    lift: rng.uniform(90, 150),
  };
}

/**
 * Mild atmospheric haze: airlight (bright bluish grey) over the whole view, evenly, no defocus.
 * 0.06-0.18 of the light: visible as a slightly washed-out picture, which no operator wants to be
 * called to (a thick fog is a scene condition too, but not in this benign kind).
 */
export function haze(rng: Prng, W: number, H: number, params: Record<string, number | string>): Film {
  const strength = rng.uniform(0.06, 0.18);
  params.strength = Math.round(strength * 1000) / 1000;
  const blue = rng.uniform(0.02, 0.1);
  return {
    opacity: toOpacity(solid(H, W, [255, 255, 255]), strength),
    scatterSigma: 0,
    glare: 1,
    tint: [0.4 * (1 + blue), 0.4, 0.4 * (1 - blue)],
    lift: rng.uniform(100, 140),
  };
}
