// Still-image fixtures with exact ground truth: labelled real faces (faces.json) with a neck and a
// torso, 30-200 px wide, standing on textured real pictures (opencv-doc's building, home, aerial
// and Leuven photos, a cluttered table, fruit, a baboon, a squirrel, chessboards, frames of
// vtest.avi with real pedestrians). Some pictures hold no face at all. Each still is a JPEG with a
// `<name>.truth.json` in the format of the video fixtures (truth.ts: one frame, one box per face).
import fs from 'node:fs';
import path from 'node:path';
import cv from '../../lib/video/opencv.js';
import { Prng } from '../kamcheck-fixtures/prng.js';
import { loadStill, loadVtestFrames, NoiseBank } from '../kamcheck-fixtures/scenes.js';
import { OPENCV_DATA_DIR as FOOTAGE_DIR } from '../opencv-data.js';
import { clipBox, coverage, drawPerson, faceBox, personShapes, type Box, type Colour, type Polygon } from './compose.js';
import { HeadSprites, identitiesByGender, loadFaceList, type LabelledFace } from './faces.js';
import { TRUTH_DEFINITIONS, type FacelogFixtureVideo, type FacelogTruth, type Gender } from './truth.js';
import type { Pose } from './walk.js';
import { emptyFixtureDir } from '../fixture-dir.js';

/** Textured backgrounds: opencv-doc pictures, and `vtest.avi@N` for frame N of the pedestrian footage. */
export const STILL_BACKGROUNDS = [
  'building.jpg', 'home.jpg', 'aero1.jpg', 'aero3.jpg', 'leuvenA.jpg', 'leuvenB.jpg', 'box_in_scene.png', 'fruits.jpg',
  'stuff.jpg', 'baboon.jpg', 'squirrel_cls.jpg', 'left01.jpg', 'graf1.png', 'starry_night.jpg', 'licenseplate_motion.jpg',
  'vtest.avi@0', 'vtest.avi@150', 'vtest.avi@300', 'vtest.avi@450', 'vtest.avi@600', 'vtest.avi@750',
] as const;
export const STILL_SIZES: ReadonlyArray<[number, number]> = [[640, 480], [1024, 768], [1280, 720]];
/** Face widths drawn (log-uniform), output pixels. */
export const STILL_FACE_WIDTHS = [30, 200] as const;
/** Share of the stills with no face (texture only). */
const EMPTY_SHARE = 0.2;
/** People in a still with faces. */
const PEOPLE = [1, 6] as const;
/** A face may be hidden by a nearer person's head, neck or torso by at most this share. */
const MAX_HIDDEN = 0.02;

export const DEFAULT_STILLS_DIR = 'test/fixtures/generated/facelog-stills';
export const DEFAULT_STILLS_BENCH_DIR = 'test/fixtures/generated/facelog-stills-bench';
/** The calibration draw of the bench (its thresholds were chosen on it) and the held-out draw. */
export const STILLS_SEEDS = { test: 5, calibration: 11, heldout: 12 } as const;

export interface StillsManifest {
  set: 'stills';
  seed: number;
  videos: FacelogFixtureVideo[];
}

interface StillPerson {
  face: LabelledFace;
  pose: Pose;
  clothes: Colour;
}

export interface StillPlan {
  name: string;
  width: number;
  height: number;
  background: string;
  /** Where in the background the picture is cut (share of the spare room) and how much it is enlarged. */
  cropX: number;
  cropY: number;
  zoom: number;
  persons: StillPerson[];
  noiseSigma: number;
  quality: number;
}

/** Hands out identities so that both genders appear equally often, each gender's people in turn. */
class StillCasting {
  private readonly byGender: Record<Gender, Map<string, LabelledFace[]>>;
  private readonly queues: Record<Gender, string[]>;
  private readonly next = { male: 0, female: 0 };
  private readonly count = { male: 0, female: 0 };

  constructor(faces: LabelledFace[], private readonly rng: Prng) {
    this.byGender = identitiesByGender(faces);
    const shuffled = (xs: string[]) => xs.map((x) => ({ x, k: rng.next() })).sort((a, b) => a.k - b.k).map((e) => e.x);
    this.queues = { male: shuffled([...this.byGender.male.keys()]), female: shuffled([...this.byGender.female.keys()]) };
  }

  cast(taken: Set<string>): LabelledFace {
    const gender: Gender = this.count.male === this.count.female ? (this.rng.next() < 0.5 ? 'male' : 'female') : this.count.male < this.count.female ? 'male' : 'female';
    const queue = this.queues[gender];
    let id = queue[this.next[gender]++ % queue.length];
    for (let k = 0; taken.has(id) && k < queue.length; k++) id = queue[this.next[gender]++ % queue.length];
    taken.add(id);
    this.count[gender]++;
    return this.rng.pick(this.byGender[gender].get(id)!);
  }
}

function clothes(rng: Prng): Colour {
  const base = rng.uniform(25, 150);
  return [base * rng.uniform(0.6, 1.3), base * rng.uniform(0.6, 1.3), base * rng.uniform(0.6, 1.3)];
}

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** People placed one by one where their head (1.6 face widths, 2 high) overlaps no other head. */
function placePeople(rng: Prng, casting: StillCasting, sprites: HeadSprites, W: number, H: number, widths: Array<number | undefined>): StillPerson[] {
  const taken = new Set<string>();
  const persons: StillPerson[] = [];
  const heads: Box[] = [];
  const [lo, hi] = STILL_FACE_WIDTHS;
  for (const width of widths) {
    const face = casting.cast(taken);
    const maxW = Math.min(hi, H / 3);
    for (let attempt = 0; attempt < 40; attempt++) {
      const w = width ?? Math.exp(rng.uniform(Math.log(lo), Math.log(maxW)));
      const pose: Pose = {
        cx: rng.uniform(0.9 * w, W - 0.9 * w),
        cy: rng.uniform(1.1 * w, H - 1.3 * w),
        faceWidth: w,
        rollDeg: rng.uniform(-6, 6),
        yawDeg: rng.uniform(-15, 15),
        gain: rng.uniform(0.8, 1.15),
        opacity: 1,
      };
      const head = { x: pose.cx - 0.8 * w, y: pose.cy - 1.1 * w, width: 1.6 * w, height: 2.2 * w };
      if (heads.some((h) => overlaps(h, head))) continue;
      const candidate = [...persons, { face, pose, clothes: clothes(rng) }];
      if (maxHidden(candidate, sprites, W, H) > MAX_HIDDEN) continue;
      persons.push(candidate[candidate.length - 1]);
      heads.push(head);
      break;
    }
  }
  return persons;
}

/** Drawn far (small) to near (large): each face may be hidden by the people drawn after it. */
function drawOrder(persons: StillPerson[]): StillPerson[] {
  return [...persons].sort((a, b) => a.pose.faceWidth - b.pose.faceWidth);
}

function maxHidden(persons: StillPerson[], sprites: HeadSprites, W: number, H: number): number {
  const drawn = drawOrder(persons);
  let worst = 0;
  drawn.forEach((p, k) => {
    const hiders: Polygon[] = drawn.slice(k + 1).flatMap((o) => Object.values(personShapes({ sprite: sprites.get(o.face), clothes: o.clothes }, o.pose)));
    const c = coverage(faceBox(sprites.get(p.face), p.pose), W, H, hiders);
    worst = Math.max(worst, c.hidden, 1 - c.inFrame);
  });
  return worst;
}

export function planStills(count: number, seed: number, sprites: HeadSprites, prefix = 'still'): StillPlan[] {
  const rng = new Prng(seed);
  const casting = new StillCasting(loadFaceList(), rng.fork(1));
  return Array.from({ length: count }, (_, i) => {
    const r = rng.fork(100 + i);
    const [W, H] = r.pick(STILL_SIZES);
    const background = STILL_BACKGROUNDS[(i + Math.floor(seed * 7)) % STILL_BACKGROUNDS.length];
    const people = r.next() < EMPTY_SHARE ? 0 : r.int(PEOPLE[0], PEOPLE[1]);
    return {
      name: `${prefix}-${String(i + 1).padStart(2, '0')}-${background.replace(/[.@]/g, '_')}-${W}x${H}`,
      width: W,
      height: H,
      background,
      cropX: r.next(),
      cropY: r.next(),
      zoom: r.uniform(1, 1.4),
      persons: placePeople(r, casting, sprites, W, H, new Array<undefined>(people).fill(undefined)),
      noiseSigma: r.uniform(1, 2.5),
      quality: r.int(80, 95),
    };
  });
}

/** The background scaled to cover W x H (times the zoom) and cut at the plan's place. */
function backgroundOf(plan: StillPlan, vtest: Map<number, cv.Mat>): cv.Mat {
  const m = /^vtest\.avi@(\d+)$/.exec(plan.background);
  const src = m ? vtest.get(Number(m[1]))! : loadStill(plan.background);
  if (!src || src.empty) throw new Error(`cannot read ${FOOTAGE_DIR}/${plan.background} (Debian package opencv-doc)`);
  const s = Math.max(plan.width / src.cols, plan.height / src.rows) * plan.zoom;
  const w = Math.max(plan.width, Math.round(src.cols * s));
  const h = Math.max(plan.height, Math.round(src.rows * s));
  const scaled = src.resize(h, w, 0, 0, s < 1 ? cv.INTER_AREA : cv.INTER_LINEAR);
  const x = Math.round(plan.cropX * (w - plan.width));
  const y = Math.round(plan.cropY * (h - plan.height));
  return scaled.getRegion(new cv.Rect(x, y, plan.width, plan.height)).copy();
}

const round1 = (v: number) => Math.round(v * 10) / 10;

export function renderStill(plan: StillPlan, sprites: HeadSprites, vtest: Map<number, cv.Mat>, noise: NoiseBank, rng: Prng): { image: cv.Mat; truth: FacelogTruth } {
  const image = backgroundOf(plan, vtest);
  const W = plan.width;
  const H = plan.height;
  const drawn = drawOrder(plan.persons);
  for (const p of drawn) {
    const look = { sprite: sprites.get(p.face), clothes: p.clothes };
    drawPerson(image, look, p.pose, personShapes(look, p.pose));
  }
  const appearances = plan.persons.map((p, i) => {
    const b = clipBox(faceBox(sprites.get(p.face), p.pose), W, H)!;
    const x = round1(b.x);
    const y = round1(b.y);
    const box = { frame: 0, x, y, width: round1(b.x + b.width - x), height: round1(b.y + b.height - y), occluded: false, visible: 1 };
    return { id: i, identity: p.face.identity, face: p.face.id, gender: p.face.gender, start_frame: 0, end_frame: 0, boxes: [box] };
  });
  const truth: FacelogTruth = {
    name: plan.name,
    scenario: 'still',
    file: `${plan.name}.jpg`,
    width: W,
    height: H,
    fps: 0,
    frame_count: 1,
    background: plan.background,
    appearances,
    definitions: TRUTH_DEFINITIONS,
  };
  return { image: noise.addNoise(image, plan.noiseSigma, rng), truth };
}

/**
 * The stills of test/47: four people (both genders, faces 48-150 px) on a textured picture, and the
 * same kind of picture with nobody in it.
 */
export function planTestStills(sprites: HeadSprites): StillPlan[] {
  const rng = new Prng(STILLS_SEEDS.test);
  const casting = new StillCasting(loadFaceList(), rng.fork(1));
  const plan = (name: string, background: string, widths: number[]): StillPlan => ({
    name, width: 1024, height: 768, background, cropX: 0.5, cropY: 0.5, zoom: 1.1,
    persons: placePeople(rng.fork(name.length), casting, sprites, 1024, 768, widths), noiseSigma: 1.5, quality: 90,
  });
  return [plan('test-faces-building', 'building.jpg', [48, 72, 110, 150]), plan('test-texture-only', TEST_TEXTURE_BACKGROUND, [])];
}

/** The texture-only still of the test set. */
const TEST_TEXTURE_BACKGROUND = 'aero3.jpg';

export function generateTestStills(dir: string, log: (line: string) => void = () => undefined): StillsManifest {
  const sprites = new HeadSprites();
  return writeStills(dir, planTestStills(sprites), STILLS_SEEDS.test, sprites, log);
}

/** Stills per bench draw. */
export const STILLS_BENCH_COUNT = 60;

/** Writes `count` stills of draw `seed` into `dir` (emptied first), with their truth and manifest.json. */
export function generateStills(dir: string, count: number, seed: number, log: (line: string) => void = () => undefined, prefix = 'still'): StillsManifest {
  const sprites = new HeadSprites();
  return writeStills(dir, planStills(count, seed, sprites, prefix), seed, sprites, log);
}

function writeStills(dir: string, plans: StillPlan[], seed: number, sprites: HeadSprites, log: (line: string) => void): StillsManifest {
  const started = Date.now();
  const frames = new Set(plans.flatMap((p) => /^vtest\.avi@(\d+)$/.exec(p.background)?.[1] ?? []).map(Number));
  const vtest = loadVtestFrames(frames);
  const rng = new Prng(seed * 31 + 7);
  const noise = new NoiseBank(new Prng(seed * 7919));
  emptyFixtureDir(dir, 'stills', seed);
  const videos: FacelogFixtureVideo[] = plans.map((plan) => {
    const { image, truth } = renderStill(plan, sprites, vtest, noise, rng);
    cv.imwrite(path.join(dir, truth.file), image, [cv.IMWRITE_JPEG_QUALITY, plan.quality]);
    const truthFile = `${plan.name}.truth.json`;
    fs.writeFileSync(path.join(dir, truthFile), JSON.stringify(truth));
    return { name: plan.name, scenario: 'still', file: truth.file, truth: truthFile, width: plan.width, height: plan.height, frames: 1, appearances: truth.appearances.length };
  });
  const manifest: StillsManifest = { set: 'stills', seed, videos };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
  const faces = videos.reduce((n, v) => n + v.appearances, 0);
  log(`${videos.length} stills, ${faces} faces in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return manifest;
}

export function readStillsManifest(dir: string): StillsManifest | undefined {
  const file = path.join(dir, 'manifest.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as StillsManifest) : undefined;
}
