// Which cases a fixture set holds (plan), and how one case is rendered into a reference picture
// and clip frames (render). Every random choice comes from the case's own seed.
import cv from '../../lib/video/opencv.js';
import { Prng } from './prng.js';
import { BENIGN_KINDS, CaseKind, FixtureCase, TAMPER_KINDS } from './manifest.js';
import {
  centredView, drawWalkers, loadStill, NoiseBank, randomWalkers, renderView, STILL_SCENES, View, viewFits,
  VTEST_BUSY, VTEST_FRAMES, VTEST_QUIET,
} from './scenes.js';
import {
  applyLuts, applyShadow, clipGainLut, compressed, defocus, fullCover, gainLut, gammaLut, occlude, randomMaskRect, rain,
  rectOccluder, shadowMap, solid,
} from './effects.js';
import { filmEffect, foggedWindow, haze, smearedFull, smearedPartial, sprayMist } from './films.js';
import { headlights, irSwitch, lampsOn, monochrome, NightLook, nightLook, nightPrecipitation } from './night.js';

export const RESOLUTIONS: ReadonlyArray<[number, number]> = [[320, 240], [640, 480], [1280, 720], [1920, 1080]];
export const SET_SEEDS = { test: 1, bench: 2 } as const;
/** Cases per (kind, resolution) in the bench set. */
const BENCH_REPEATS = 5;
/** Cases per kind in the test set (each at a different resolution). */
const TEST_REPEATS = 3;

export type SceneChoice = { type: 'vtest'; refFrame: number; clipStart: number } | { type: 'still'; file: string };

export interface CasePlan {
  id: string;
  kind: CaseKind;
  label: 'tamper' | 'benign';
  width: number;
  height: number;
  frames: number;
  scene: SceneChoice;
  seed: number;
}

/** Kinds added after the first sets were made; planned last, so the cases of older kinds keep their random draws and ids. */
const LATER_KINDS: CaseKind[] = ['smeared_partial', 'smeared_full', 'spray_mist', 'fogged_window', 'dusk', 'haze'];
/** The night and the slight kinds, planned after those. */
export const NIGHT_KINDS: CaseKind[] = [
  'slight_defocus', 'moved_slight', 'night_defocus', 'night_masked',
  'night_low_light', 'night_dark', 'ir_switch', 'headlights', 'lamps_on', 'night_precipitation',
];
const ALL_KINDS: CaseKind[] = [
  ...[...TAMPER_KINDS, ...BENIGN_KINDS].filter((k) => !LATER_KINDS.includes(k) && !NIGHT_KINDS.includes(k)),
  ...LATER_KINDS,
  ...NIGHT_KINDS,
];

/** `seed` overrides the set's own seed: another seed gives a held-out set of the same design. */
export function planSet(set: 'test' | 'bench', seed: number = SET_SEEDS[set]): CasePlan[] {
  const rng = new Prng(seed);
  const plans: CasePlan[] = [];
  const add = (kind: CaseKind, res: [number, number], useVtest: boolean, salt: number) => {
    const caseRng = rng.fork(salt);
    const label = (TAMPER_KINDS as readonly string[]).includes(kind) ? 'tamper' : 'benign';
    const frames = caseRng.int(10, 25);
    let scene: SceneChoice;
    if (useVtest) {
      const refFrame = caseRng.int(VTEST_QUIET[0], VTEST_QUIET[1]);
      let clipStart: number;
      if (kind === 'people') clipStart = caseRng.int(VTEST_BUSY[0], VTEST_BUSY[1] - frames);
      else {
        // any time at least 40 frames (1.6 s) away from the reference: other people, other places
        do clipStart = caseRng.int(0, VTEST_FRAMES - frames - 1);
        while (Math.abs(clipStart - refFrame) < 40 || Math.abs(clipStart + frames - refFrame) < 40);
      }
      scene = { type: 'vtest', refFrame, clipStart };
    } else {
      scene = { type: 'still', file: caseRng.pick(STILL_SCENES) };
    }
    const id = `${set}-${String(plans.length).padStart(3, '0')}-${kind}-${res[0]}x${res[1]}`;
    plans.push({ id, kind, label, width: res[0], height: res[1], frames, scene, seed: Math.floor(caseRng.next() * 2 ** 31) });
  };
  ALL_KINDS.forEach((kind, k) => {
    if (set === 'test') {
      for (let j = 0; j < TEST_REPEATS; j++) add(kind, RESOLUTIONS[(k + j) % RESOLUTIONS.length], j === 0 || (j === 2 && k % 2 === 1), k * 100 + j);
    } else {
      RESOLUTIONS.forEach((res, r) => {
        for (let j = 0; j < BENCH_REPEATS; j++) add(kind, res, j % 5 === 0 || j % 5 === 2, k * 1000 + r * 100 + j);
      });
    }
  });
  return plans;
}

export function vtestFramesNeeded(plans: CasePlan[]): Set<number> {
  const need = new Set<number>();
  for (const p of plans) {
    if (p.scene.type !== 'vtest') continue;
    need.add(p.scene.refFrame);
    for (let t = 0; t < p.frames; t++) need.add(p.scene.clipStart + t);
  }
  return need;
}

export interface RenderedCase {
  reference: cv.Mat;
  frames: cv.Mat[];
  crf: number;
  params: Record<string, number | string>;
}

/** A kind whose clip is a night (renderNightCase): the night kinds but the slight ones, which are by day. */
export function rendersAtNight(kind: CaseKind): boolean {
  return (NIGHT_KINDS as string[]).includes(kind) && kind !== 'slight_defocus' && kind !== 'moved_slight';
}

export function sceneName(s: SceneChoice): string {
  return s.type === 'vtest' ? `vtest@${s.refFrame}/${s.clipStart}` : s.file;
}

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

export function renderCase(plan: CasePlan, vtest: Map<number, cv.Mat>, noise: NoiseBank): RenderedCase {
  const rng = new Prng(plan.seed);
  const { width: W, height: H, kind } = plan;
  const params: Record<string, number | string> = {};

  // the scene at reference time and at clip time t, in source pixels
  let refSource: cv.Mat;
  let clipSource: (t: number) => cv.Mat;
  if (plan.scene.type === 'vtest') {
    const { refFrame, clipStart } = plan.scene;
    refSource = vtest.get(refFrame)!;
    clipSource = (t) => vtest.get(clipStart + t)!;
  } else {
    const still = loadStill(plan.scene.file);
    const refWalkers = randomWalkers(rng, kind === 'people' ? 0 : rng.int(0, 1), still.cols, still.rows);
    const clipWalkers = randomWalkers(rng, kind === 'people' ? rng.int(4, 7) : rng.int(2, 4), still.cols, still.rows);
    refSource = drawWalkers(still, refWalkers, rng.int(0, 20));
    clipSource = (t) => drawWalkers(still, clipWalkers, t);
  }
  const srcW = refSource.cols;
  const srcH = refSource.rows;
  const refView = centredView(srcW, srcH, W, H);
  let clipView: View = refView;
  if (kind === 'moved') clipView = movedView(rng, refView, srcW, srcH, W, H, params);
  if (kind === 'moved_slight') clipView = slightlyMovedView(rng, refView, srcW, srcH, W, H, params);

  if (rendersAtNight(kind)) {
    return renderNightCase(plan, rng, refSource, clipSource, refView, noise, params);
  }

  // at dusk the camera's gain is up, and its noise with it
  const sensorSigma = kind === 'noise' ? rng.uniform(6, 12) : kind === 'dusk' ? rng.uniform(3, 7) : rng.uniform(1, 2.5);
  params.sensorSigma = round(sensorSigma, 2);
  const crf = kind === 'heavy_compression' ? rng.int(42, 50) : rng.int(18, 30);

  const reference = noise.addNoise(renderView(refSource, refView, W, H), rng.uniform(1, 2.5), rng);
  const effect = clipEffect(kind, rng, W, H, params);
  const frames: cv.Mat[] = [];
  for (let t = 0; t < plan.frames; t++) {
    if (kind === 'frozen' && t > 0) {
      frames.push(frames[0]); // one frame repeated: the encoder sees bit-identical input
      continue;
    }
    const optical = effect(renderView(clipSource(t), clipView, W, H));
    frames.push(noise.addNoise(optical, sensorSigma, rng));
  }
  return { reference, frames, crf, params };
}

/**
 * A clip at night. The benign kinds are checked against a daytime reference (the first night
 * after installation, before a night reference is learned); the tampering at night against a day
 * or a night reference, half and half. Optics (defocus, a mask) act before the night's light and
 * gain, the sensor noise of that gain after them, and an infrared camera sends grey.
 */
function renderNightCase(
  plan: CasePlan, rng: Prng, refSource: cv.Mat, clipSource: (t: number) => cv.Mat, view: View, noise: NoiseBank,
  params: Record<string, number | string>,
): RenderedCase {
  const { width: W, height: H, kind } = plan;
  const ir = kind === 'ir_switch' || ((kind === 'night_defocus' || kind === 'night_masked') && rng.next() < 0.25);
  const look: NightLook = ir ? irSwitch(rng, W, H, params) : nightLook(rng, kind === 'night_low_light' ? 'low' : kind === 'night_dark' ? 'dark' : rng.pick(['low', 'dark'] as const), params);
  if (ir) params.infrared = 1;
  const crf = rng.int(18, 30);
  const nightReference = (kind === 'night_defocus' || kind === 'night_masked') && rng.next() < 0.5;
  params.reference = nightReference ? 'night' : 'day';
  // infrared noise is grey: added per channel and then made grey, it would lose sqrt(3) of its sigma
  const sensor = (f: cv.Mat) => (ir ? monochrome(noise.addNoise(f, look.noiseSigma * Math.sqrt(3), rng)) : noise.addNoise(f, look.noiseSigma, rng));
  const refPicture = renderView(refSource, view, W, H);
  // a night reference is learned from a compressed night clip: its noise is as compressed as the clip's
  const reference = nightReference ? compressed(sensor(look.apply(refPicture)), rng.int(60, 85)) : noise.addNoise(refPicture, rng.uniform(1, 2.5), rng);

  let optics: (f: cv.Mat) => cv.Mat = (f) => f;
  let lights: (f: cv.Mat, t: number) => cv.Mat = (f) => f;
  if (kind === 'night_defocus') {
    const sigma = rng.uniform(0.004, 0.012) * W; // 2.6-7.7 px at 640 wide
    params.sigma = round(sigma, 2);
    optics = (f) => defocus(f, sigma);
  } else if (kind === 'night_masked') {
    const full = rng.next() < 0.3;
    if (full) {
      const cover = fullCover(W, H, rng, rng.next() < 0.5);
      params.area = 1;
      optics = () => cover;
    } else {
      const rect = randomMaskRect(rng, W, H, rng.uniform(0.3, 0.6));
      params.area = round((rect.w * rect.h) / (W * H));
      const occluder = rectOccluder(W, H, rect, rng, rng.next() < 0.5, rng.uniform(0, 0.01) * W);
      optics = (f) => occlude(f, occluder);
    }
  } else if (kind === 'headlights') {
    lights = headlights(rng, W, H, params);
  } else if (kind === 'lamps_on') {
    lights = lampsOn(rng, W, H, plan.frames, params);
  } else if (kind === 'night_precipitation') {
    const fall = nightPrecipitation(rng, W, H, params);
    lights = (f) => fall(f);
  }
  const frames: cv.Mat[] = [];
  for (let t = 0; t < plan.frames; t++) {
    frames.push(sensor(lights(look.apply(optics(renderView(clipSource(t), view, W, H))), t)));
  }
  return { reference, frames, crf, params };
}

/** A small turn of the camera: 1.5-3 degrees, or a shift of 2.5-4.5% of the view's width. */
function slightlyMovedView(rng: Prng, ref: View, srcW: number, srcH: number, W: number, H: number, params: Record<string, number | string>): View {
  const rotate = rng.next() < 0.5;
  const angle = rotate ? rng.uniform(1.5, 3) * rng.sign() : 0;
  let shift = rotate ? 0 : rng.uniform(0.025, 0.045);
  const dir = rng.uniform(0, 2 * Math.PI);
  let view: View = ref;
  for (let attempt = 0; attempt < 30; attempt++) {
    view = { ...ref, cx: ref.cx + shift * ref.cropW * Math.cos(dir), cy: ref.cy + shift * ref.cropW * Math.sin(dir), angleDeg: angle };
    if (viewFits(view, srcW, srcH, W, H)) break;
    shift *= 0.92;
  }
  params.variant = rotate ? 'rotate' : 'translate';
  params.shiftFraction = round(shift);
  params.angleDeg = round(angle, 2);
  return view;
}

function movedView(rng: Prng, ref: View, srcW: number, srcH: number, W: number, H: number, params: Record<string, number | string>): View {
  const variant = rng.pick(['translate', 'rotate', 'both'] as const);
  let shift = variant === 'rotate' ? 0 : rng.uniform(0.05, 0.1); // fraction of the view width
  let angle = variant === 'translate' ? 0 : rng.uniform(3, 7) * rng.sign(); // degrees
  const dir = rng.uniform(0, 2 * Math.PI);
  let view: View = ref;
  for (let attempt = 0; attempt < 30; attempt++) {
    view = { ...ref, cx: ref.cx + shift * ref.cropW * Math.cos(dir), cy: ref.cy + shift * ref.cropW * Math.sin(dir), angleDeg: angle };
    if (viewFits(view, srcW, srcH, W, H)) break;
    shift = shift > 0 ? Math.max(0.05, shift * 0.92) : 0;
    angle = Math.sign(angle) * Math.max(3, Math.abs(angle) * 0.92);
  }
  params.variant = variant;
  params.shiftFraction = round(shift);
  params.angleDeg = round(angle, 2);
  return view;
}

/** The per-frame transform of the kind, with its random parameters drawn once per clip. */
function clipEffect(kind: CaseKind, rng: Prng, W: number, H: number, params: Record<string, number | string>): (f: cv.Mat) => cv.Mat {
  switch (kind) {
    case 'slight_defocus': {
      const sigma = rng.uniform(2, 3.2) * (W / 640); // a small turn of the focus ring: 2-3.2 px at 640 wide
      params.sigma = round(sigma, 2);
      return (f) => defocus(f, sigma);
    }
    case 'blur': {
      const sigma = rng.uniform(0.006, 0.012) * W; // 1.9-3.8 px at 320 wide, 11-23 px at 1920
      params.sigma = round(sigma, 2);
      return (f) => defocus(f, sigma);
    }
    case 'masked_partial_flat':
    case 'masked_partial_textured': {
      const area = rng.uniform(0.3, 0.6);
      const rect = randomMaskRect(rng, W, H, area);
      const edge = rng.uniform(0, 0.01) * W;
      params.area = round((rect.w * rect.h) / (W * H));
      const occluder = rectOccluder(W, H, rect, rng, kind === 'masked_partial_textured', edge);
      return (f) => occlude(f, occluder);
    }
    case 'masked_full': {
      const textured = rng.next() < 0.5;
      params.textured = textured ? 1 : 0;
      const cover = fullCover(W, H, rng, textured);
      return () => cover;
    }
    case 'overexposed': {
      const gain = rng.uniform(2.5, 5);
      const lift = rng.uniform(0, 40);
      params.gain = round(gain, 2);
      const t = clipGainLut(gain, lift);
      return (f) => applyLuts(f, [t, t, t]);
    }
    case 'underexposed': {
      const gain = rng.uniform(0.12, 0.3);
      params.gain = round(gain, 3);
      const t = clipGainLut(gain, 0);
      return (f) => applyLuts(f, [t, t, t]);
    }
    case 'black': {
      const level = rng.uniform(0, 10);
      params.level = round(level, 1);
      const dark = solid(H, W, [level, level, level]);
      return () => dark;
    }
    case 'lighting_gain': {
      const gain = rng.next() < 0.5 ? rng.uniform(0.6, 0.9) : rng.uniform(1.15, 1.5);
      params.gain = round(gain, 3);
      const t = gainLut(gain);
      return (f) => applyLuts(f, [t, t, t]);
    }
    case 'gamma': {
      const gamma = rng.next() < 0.5 ? rng.uniform(0.6, 0.85) : rng.uniform(1.2, 1.6);
      params.gamma = round(gamma, 3);
      const t = gammaLut(gamma);
      return (f) => applyLuts(f, [t, t, t]);
    }
    case 'colour_cast': {
      const gb = rng.uniform(0.7, 1.3);
      const gg = rng.uniform(0.9, 1.1);
      const gr = rng.uniform(0.7, 1.3);
      params.gainB = round(gb, 3);
      params.gainR = round(gr, 3);
      const luts: [Uint8Array, Uint8Array, Uint8Array] = [gainLut(gb), gainLut(gg), gainLut(gr)];
      return (f) => applyLuts(f, luts);
    }
    case 'shadows': {
      const depth = rng.uniform(0.3, 0.6);
      params.depth = round(depth);
      const map = shadowMap(rng, W, H, depth);
      return (f) => applyShadow(f, map);
    }
    case 'rain': {
      const density = rng.uniform(0.2, 0.6);
      const slant = rng.uniform(-20, 20);
      const strength = rng.uniform(0.3, 0.6);
      params.density = round(density);
      params.strength = round(strength);
      const rainRng = rng.fork(7);
      return (f) => rain(f, rainRng, density, slant, strength);
    }
    case 'smeared_partial':
      return filmEffect(smearedPartial(rng, W, H, params), W, H);
    case 'smeared_full':
      return filmEffect(smearedFull(rng, W, H, params), W, H);
    case 'spray_mist':
      return filmEffect(sprayMist(rng, W, H, params), W, H);
    case 'fogged_window':
      return filmEffect(foggedWindow(rng, W, H, params), W, H);
    case 'haze':
      return filmEffect(haze(rng, W, H, params), W, H);
    case 'dusk': {
      // less light, which auto-exposure mostly makes up for (to 0.6-0.85 of the mid-grey
      // brightness: darker is the underexposed kind), a darker gamma, and the light turns warm or blue
      const gain = rng.uniform(0.7, 0.9);
      const gamma = rng.uniform(1.0, 1.1);
      const warm = rng.next() < 0.5 ? 1 : -1;
      const shift = rng.uniform(0.05, 0.15) * warm;
      params.gain = round(gain, 3);
      params.gamma = round(gamma, 3);
      params.tint = round(shift, 3);
      const channel = (g: number) => {
        const t = gainLut(gain * g);
        const c = gammaLut(gamma);
        return Uint8Array.from(t, (v) => c[v]);
      };
      const luts: [Uint8Array, Uint8Array, Uint8Array] = [channel(1 - shift), channel(1), channel(1 + shift)];
      return (f) => applyLuts(f, luts);
    }
    default:
      return (f) => f; // moved (the view does it), frozen (repetition does it), people, noise, heavy_compression, none
  }
}

export function toManifestCase(plan: CasePlan, r: RenderedCase): FixtureCase {
  return {
    id: plan.id,
    label: plan.label,
    kind: plan.kind,
    width: plan.width,
    height: plan.height,
    frames: r.frames.length,
    scene: sceneName(plan.scene),
    crf: r.crf,
    params: r.params,
  };
}
