// Which fixtures a set holds and, for each, who walks where and when. Every random choice comes
// from the set's seed; the identities are drawn so that both genders appear equally often.
import { Prng } from '../kamcheck-fixtures/prng.js';
import type { View } from '../kamcheck-fixtures/scenes.js';
import { clipBox, coverage, faceBox, passerbyShapes, personShapes, type Colour, type Passerby } from './compose.js';
import { HeadSprites, identitiesByGender, type HeadSprite, type LabelledFace } from './faces.js';
import { cameraView, FOOTAGE_FRAMES } from './footage.js';
import type { FacelogSet, Gender, Scenario } from './truth.js';
import { lastFrame, poseAt, type WalkPlan } from './walk.js';

export const FPS = 25;
export const SET_SEEDS = { test: 1, bench: 2, night: 3 } as const;
export const BENCH_RESOLUTIONS: ReadonlyArray<[number, number]> = [[640, 480], [1280, 720], [1920, 1080]];
/** The night set: the bench's design at the two sizes most pinch-point cameras record at night. */
export const NIGHT_RESOLUTIONS: ReadonlyArray<[number, number]> = [[640, 480], [1280, 720]];

/**
 * How a night video looks (testkit/kamcheck-fixtures/night.ts): `low` about half the day's light
 * with the noise of gain, `dark` about a third with heavier noise, `ir` the camera's infrared
 * (monochrome, its illuminator falling off towards the edges).
 */
export type NightKind = 'low' | 'dark' | 'ir';
const NIGHT_KINDS: NightKind[] = ['low', 'dark', 'ir'];

/** A face is part of an appearance when at least this opaque and at least this share of its box is in the frame. */
export const MIN_OPACITY = 0.5;
export const MIN_IN_FRAME = 0.5;
/** 5 s: the gap between the two appearances of a re-appearing person (the sighting generator joins gaps up to 3 s). */
export const REAPPEAR_MIN_GAP_FRAMES = 5 * FPS;
/** Frames in which a passer-by hides at least half of the face, in the occlusion scenario. */
export const OCCLUSION_FRAMES = [5, 15] as const;

export interface PersonPlan {
  face: LabelledFace;
  walk: WalkPlan;
  clothes: Colour;
}

export interface VideoPlan {
  name: string;
  scenario: Scenario;
  width: number;
  height: number;
  /** 1 for a still. */
  frames: number;
  backgroundStart: number;
  view: View;
  persons: PersonPlan[];
  passersby: Passerby[];
  crf: number;
  noiseSigma: number;
  seed: number;
  night?: NightKind;
}

/** First and last frame in which the person counts as visible (opaque enough, inside enough). */
export function visibleSpan(walk: WalkPlan, sprite: HeadSprite, W: number, H: number): [number, number] | undefined {
  let first = -1;
  let last = -1;
  for (let f = walk.startFrame; f <= lastFrame(walk); f++) {
    const pose = poseAt(walk, f)!;
    if (pose.opacity < MIN_OPACITY) continue;
    if (coverage(faceBox(sprite, pose), W, H, []).inFrame < MIN_IN_FRAME) continue;
    if (first < 0) first = f;
    last = f;
  }
  return first < 0 ? undefined : [first, last];
}

/** Hands out identities: the gender with fewer appearances so far, each gender's people in turn (shuffled), none twice in one video. */
class Casting {
  private readonly queues: Record<Gender, string[]>;
  private readonly next: Record<Gender, number> = { male: 0, female: 0 };
  private readonly appearances: Record<Gender, number> = { male: 0, female: 0 };
  private readonly byGender: Record<Gender, Map<string, LabelledFace[]>>;

  constructor(faces: LabelledFace[], private readonly rng: Prng) {
    this.byGender = identitiesByGender(faces);
    this.queues = { male: shuffle([...this.byGender.male.keys()], rng), female: shuffle([...this.byGender.female.keys()], rng) };
  }

  /** One person for a video that already has `taken` identities; `appearances`: 2 for a re-appearing person. */
  cast(taken: Set<string>, appearances = 1): LabelledFace {
    const { male, female } = this.appearances;
    const gender: Gender = male === female ? (this.rng.next() < 0.5 ? 'male' : 'female') : male < female ? 'male' : 'female';
    const queue = this.queues[gender];
    let identity = queue[this.next[gender]++ % queue.length];
    for (let k = 0; taken.has(identity) && k < queue.length; k++) identity = queue[this.next[gender]++ % queue.length];
    taken.add(identity);
    this.appearances[gender] += appearances;
    return this.rng.pick(this.byGender[gender].get(identity)!);
  }
}

function shuffle<T>(items: T[], rng: Prng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

type Lane = 'left' | 'right' | 'any';

interface WalkOptions {
  startFrame: number;
  approachFrames: [number, number];
  lane?: Lane;
  /** Range of the final face width. */
  endWidth?: [number, number];
}

/** A walk towards the camera: ~30 px far away at the top, ~150 px close by, lower down. */
function randomWalk(rng: Prng, W: number, H: number, o: WalkOptions): WalkPlan {
  const w0 = rng.uniform(28, 34);
  const [e0, e1] = o.endWidth ?? [130, 170];
  const w1 = rng.uniform(e0, e1);
  const lane = o.lane ?? 'any';
  const margin = 0.03 * W + w1 / 2;
  let x0: number;
  let x1: number;
  if (lane === 'any') {
    x0 = W * rng.uniform(0.2, 0.8);
    x1 = clamp(x0 + W * rng.uniform(-0.3, 0.3), margin, W - margin);
  } else {
    const mirror = (v: number) => (lane === 'left' ? v : W - v);
    x0 = mirror(W * rng.uniform(0.12, 0.38));
    x1 = clamp(mirror(W * rng.uniform(0.15, 0.4)), margin, W - margin);
  }
  const y1 = H * rng.uniform(0.4, 0.58);
  const exit = rng.next() < 0.6 ? 'leave' : 'fade';
  const side = x1 < W / 2 ? -1 : 1;
  const rollBase = rng.uniform(-3, 3);
  return {
    startFrame: o.startFrame,
    approachFrames: rng.int(o.approachFrames[0], o.approachFrames[1]),
    from: { x: x0, y: H * rng.uniform(0.2, 0.36), width: w0 },
    to: { x: x1, y: y1, width: w1 },
    fadeInFrames: rng.int(3, 6),
    exit,
    exitFrames: exit === 'leave' ? rng.int(8, 16) : rng.int(6, 12),
    exitTo: { x: x1 + side * W * rng.uniform(0, 0.3), y: H + 1.5 * w1 },
    roll: { base: rollBase, amplitude: rng.uniform(1, 4), periodFrames: rng.int(18, 40), phase: rng.uniform(0, 2 * Math.PI) },
    yaw: { from: rng.uniform(-25, 25), to: rng.uniform(-10, 10) },
    light: { from: rng.uniform(0.75, 1.1), to: rng.uniform(0.85, 1.25), bump: rng.uniform(0, 0.25), bumpAt: rng.uniform(0.2, 0.8), bumpWidth: rng.uniform(0.1, 0.25) },
  };
}

function clothes(rng: Prng): Colour {
  const base = rng.uniform(25, 150);
  return [base * rng.uniform(0.6, 1.3), base * rng.uniform(0.6, 1.3), base * rng.uniform(0.6, 1.3)];
}

interface PlanContext {
  rng: Prng;
  casting: Casting;
  sprites: HeadSprites;
  W: number;
  H: number;
  /** Approach length range, frames. */
  approach: [number, number];
}

const spanOf = (c: PlanContext, p: PersonPlan) => visibleSpan(p.walk, c.sprites.get(p.face), c.W, c.H) ?? [p.walk.startFrame, p.walk.startFrame];

function person(c: PlanContext, taken: Set<string>, o: WalkOptions, face?: LabelledFace): PersonPlan {
  return { face: face ?? c.casting.cast(taken), walk: randomWalk(c.rng, c.W, c.H, o), clothes: clothes(c.rng) };
}

function planSingle(c: PlanContext): PersonPlan[] {
  return [person(c, new Set(), { startFrame: c.rng.int(0, 8), approachFrames: c.approach })];
}

function planSequence(c: PlanContext, count: number): PersonPlan[] {
  const taken = new Set<string>();
  const persons: PersonPlan[] = [];
  let lane: Lane = c.rng.next() < 0.5 ? 'left' : 'right';
  let start = c.rng.int(0, 8);
  for (let i = 0; i < count; i++) {
    const p = person(c, taken, { startFrame: start, approachFrames: c.approach, lane });
    persons.push(p);
    // the next one appears on the other side, shortly before or after this one has gone
    start = spanOf(c, p)[1] - c.rng.int(-10, 15);
    lane = lane === 'left' ? 'right' : 'left';
  }
  return persons;
}

/** Frames in which the two face boxes overlap. */
function overlapFrames(c: PlanContext, a: PersonPlan, b: PersonPlan): number {
  let n = 0;
  const sa = c.sprites.get(a.face);
  const sb = c.sprites.get(b.face);
  for (let f = Math.max(a.walk.startFrame, b.walk.startFrame); f <= Math.min(lastFrame(a.walk), lastFrame(b.walk)); f++) {
    const ba = clipBox(faceBox(sa, poseAt(a.walk, f)!), c.W, c.H);
    const bb = clipBox(faceBox(sb, poseAt(b.walk, f)!), c.W, c.H);
    if (ba && bb && ba.x < bb.x + bb.width && bb.x < ba.x + ba.width && ba.y < bb.y + bb.height && bb.y < ba.y + ba.height) n++;
  }
  return n;
}

/** Two people walking across each other's path: the nearer one passes in front of the other's face. */
function planCrossing(c: PlanContext): PersonPlan[] {
  const taken = new Set<string>();
  const near = person(c, taken, { startFrame: 0, approachFrames: c.approach });
  const far = person(c, taken, { startFrame: 0, approachFrames: c.approach });
  let best: PersonPlan[] = [];
  let bestOverlap = -1;
  for (let attempt = 0; attempt < 30 && bestOverlap < 4; attempt++) {
    const leftToRight = c.rng.next() < 0.5;
    const m = (v: number) => (leftToRight ? v : c.W - v);
    const a = randomWalk(c.rng, c.W, c.H, { startFrame: c.rng.int(0, 8), approachFrames: c.approach, endWidth: [140, 170] });
    a.from.x = m(c.W * c.rng.uniform(0.15, 0.3));
    a.to.x = m(c.W * c.rng.uniform(0.62, 0.72));
    const b = randomWalk(c.rng, c.W, c.H, { startFrame: Math.max(0, a.startFrame + c.rng.int(-8, 8)), approachFrames: [a.approachFrames - 5, a.approachFrames + 5], endWidth: [95, 120] });
    b.from.x = m(c.W * c.rng.uniform(0.7, 0.85));
    b.to.x = m(c.W * c.rng.uniform(0.28, 0.38));
    b.from.y = a.from.y - 0.03 * c.H;
    b.to.y = a.to.y - c.rng.uniform(0.02, 0.08) * c.H;
    const candidate = [{ ...near, walk: a }, { ...far, walk: b }];
    const overlap = overlapFrames(c, candidate[0], candidate[1]);
    if (overlap > bestOverlap) {
      best = candidate;
      bestOverlap = overlap;
    }
  }
  return best;
}

/** One person, and a passer-by close to the camera crossing in front of the face for 5-15 frames. */
function planOcclusion(c: PlanContext): { persons: PersonPlan[]; passersby: Passerby[] } {
  const p = person(c, new Set(), { startFrame: c.rng.int(0, 8), approachFrames: c.approach });
  const sprite = c.sprites.get(p.face);
  let best: Passerby | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    const at = p.walk.startFrame + Math.round(p.walk.approachFrames * c.rng.uniform(0.45, 0.75));
    const pose = poseAt(p.walk, at)!;
    const fh = (pose.faceWidth * sprite.faceH) / sprite.faceW;
    const target = c.rng.int(OCCLUSION_FRAMES[0] + 1, OCCLUSION_FRAMES[1] - 1);
    const bodyWidth = pose.faceWidth * c.rng.uniform(1.6, 2.6);
    // against the face's sideways motion, so that the two part quickly
    const dir = p.walk.to.x >= p.walk.from.x ? -1 : 1;
    const passer: Passerby = {
      x: pose.cx,
      atFrame: at,
      vx: (dir * bodyWidth) / target,
      bodyWidth,
      shoulders: pose.cy - fh * c.rng.uniform(1.0, 1.5),
      clothes: [c.rng.uniform(15, 70), c.rng.uniform(15, 70), c.rng.uniform(15, 70)],
      hair: c.rng.pick([[20, 25, 30], [30, 45, 70], [25, 35, 50]] as Colour[]), // dark: the back of a head, nothing like skin
      firstFrame: 0,
      lastFrame: 0,
    };
    // the face moves and grows too: correct the speed until the hidden frames hit the target
    let n = hiddenFrames(c, p, sprite, passer);
    for (let k = 0; k < 6 && n !== target && n > 0; k++) {
      passer.vx *= n / target;
      n = hiddenFrames(c, p, sprite, passer);
    }
    const halfSpan = (c.W + bodyWidth) / Math.abs(passer.vx);
    passer.firstFrame = Math.max(0, Math.floor(at - halfSpan));
    passer.lastFrame = Math.ceil(at + halfSpan);
    best = passer;
    if (n >= OCCLUSION_FRAMES[0] && n <= OCCLUSION_FRAMES[1] && clearAfter(c, p, sprite, passer)) break;
  }
  return { persons: [p], passersby: [best!] };
}

/** The passer-by has left the face alone for the last quarter of the approach. */
function clearAfter(c: PlanContext, p: PersonPlan, sprite: HeadSprite, passer: Passerby): boolean {
  for (let f = p.walk.startFrame + Math.round(0.75 * p.walk.approachFrames); f <= p.walk.startFrame + p.walk.approachFrames; f++) {
    const { body, head } = passerbyShapes(passer, f, c.H);
    if (coverage(faceBox(sprite, poseAt(p.walk, f)!), c.W, c.H, [body, head]).hidden > 0) return false;
  }
  return true;
}

function hiddenFrames(c: PlanContext, p: PersonPlan, sprite: HeadSprite, passer: Passerby): number {
  let n = 0;
  for (let f = p.walk.startFrame; f <= lastFrame(p.walk); f++) {
    const { body, head } = passerbyShapes(passer, f, c.H);
    if (coverage(faceBox(sprite, poseAt(p.walk, f)!), c.W, c.H, [body, head]).hidden >= 0.5) n++;
  }
  return n;
}

/** The same person twice, more than 5 s apart. */
function planReappear(c: PlanContext): PersonPlan[] {
  const first = person(c, new Set(), { startFrame: c.rng.int(0, 8), approachFrames: c.approach }, c.casting.cast(new Set(), 2));
  const end = spanOf(c, first)[1];
  const second = person(c, new Set(), { startFrame: end + REAPPEAR_MIN_GAP_FRAMES + c.rng.int(2, 25), approachFrames: c.approach }, first.face);
  // the fade-in makes the visible start later than the walk's start, never earlier
  return [first, second];
}

/** A photo: people standing still side by side, the nearer ones bigger and lower, none hiding another's face. */
function planStill(c: PlanContext, count: number): PersonPlan[] {
  const taken = new Set<string>();
  const faces = Array.from({ length: count }, () => c.casting.cast(taken));
  const slot = c.W / count;
  let persons: PersonPlan[] = [];
  for (let attempt = 0; attempt < 30; attempt++) {
    persons = faces.map((face, i) => {
      const w = c.rng.uniform(40, Math.min(140, slot / 2.2));
      const x = slot * (i + 0.5) + c.rng.uniform(-0.15, 0.15) * slot;
      const y = c.H * (0.3 + (0.3 * (w - 40)) / 100 + c.rng.uniform(-0.05, 0.05));
      const walk = randomWalk(c.rng, c.W, c.H, { startFrame: 0, approachFrames: [1, 1] });
      walk.from = { x, y, width: w };
      walk.to = { x, y, width: w };
      walk.fadeInFrames = 0;
      walk.exitFrames = 1;
      walk.exit = 'fade';
      walk.yaw = { from: c.rng.uniform(-15, 15), to: 0 };
      return { face, walk, clothes: clothes(c.rng) };
    });
    if (maxHidden(c, persons) < 0.05) break;
  }
  return persons;
}

/** The largest share of a face hidden by nearer people, at frame 0. */
function maxHidden(c: PlanContext, persons: PersonPlan[]): number {
  const drawn = persons
    .map((p) => ({ p, pose: poseAt(p.walk, 0)!, sprite: c.sprites.get(p.face) }))
    .sort((a, b) => a.pose.faceWidth - b.pose.faceWidth);
  let worst = 0;
  drawn.forEach((d, k) => {
    const hiders = drawn.slice(k + 1).flatMap((o) => Object.values(personShapes({ sprite: o.sprite, clothes: o.p.clothes }, o.pose)));
    worst = Math.max(worst, coverage(faceBox(d.sprite, d.pose), c.W, c.H, hiders).hidden);
  });
  return worst;
}

interface Entry {
  scenario: Scenario;
  size: [number, number];
  /** People in a sequence or a still. */
  count?: number;
  night?: NightKind;
}

const TEST_ENTRIES: Entry[] = [
  { scenario: 'single', size: [640, 480] },
  { scenario: 'sequence', size: [640, 480], count: 2 },
  { scenario: 'crossing', size: [1280, 720] },
  { scenario: 'occlusion', size: [640, 480] },
  { scenario: 'reappear', size: [640, 480] },
  { scenario: 'empty', size: [640, 480] },
  { scenario: 'still', size: [640, 480], count: 3 },
  { scenario: 'sequence', size: [640, 480], count: 2, night: 'dark' },
];

/** Per resolution: 3 + 5 x 3 + 3 x 2 + 3 + 2 x 2 = 31 appearances. */
const BENCH_ENTRIES_PER_RESOLUTION: Array<Omit<Entry, 'size'>> = [
  { scenario: 'single' }, { scenario: 'single' }, { scenario: 'single' },
  { scenario: 'sequence', count: 3 }, { scenario: 'sequence', count: 3 }, { scenario: 'sequence', count: 3 },
  { scenario: 'sequence', count: 3 }, { scenario: 'sequence', count: 3 },
  { scenario: 'crossing' }, { scenario: 'crossing' }, { scenario: 'crossing' },
  { scenario: 'occlusion' }, { scenario: 'occlusion' }, { scenario: 'occlusion' },
  { scenario: 'reappear' }, { scenario: 'reappear' },
  { scenario: 'empty' },
];

/** 2-6 s towards the camera in the bench and night sets; 1.6-2.4 s in the test set, which must stay quick. */
const APPROACH_FRAMES = { test: [40, 60], bench: [50, 150] } as const;

export function planSet(set: FacelogSet, faces: LabelledFace[], sprites: HeadSprites, seed: number = SET_SEEDS[set]): VideoPlan[] {
  const rng = new Prng(seed);
  const entries: Entry[] =
    set === 'test' ? TEST_ENTRIES : (set === 'night' ? NIGHT_RESOLUTIONS : BENCH_RESOLUTIONS).flatMap((size) => BENCH_ENTRIES_PER_RESOLUTION.map((e) => ({ ...e, size })));
  // one casting per resolution, so that each resolution is balanced on its own
  const castings = new Map<string, Casting>();
  return entries.map((e, i) => {
    const [W, H] = e.size;
    const key = `${W}x${H}`;
    if (!castings.has(key)) castings.set(key, new Casting(faces, rng.fork(W)));
    const vrng = rng.fork(1000 + i);
    const c: PlanContext = { rng: vrng, casting: castings.get(key)!, sprites, W, H, approach: [...APPROACH_FRAMES[set === 'test' ? 'test' : 'bench']] };
    let persons: PersonPlan[] = [];
    let passersby: Passerby[] = [];
    switch (e.scenario) {
      case 'single': persons = planSingle(c); break;
      case 'sequence': persons = planSequence(c, e.count ?? 2); break;
      case 'crossing': persons = planCrossing(c); break;
      case 'occlusion': ({ persons, passersby } = planOcclusion(c)); break;
      case 'reappear': persons = planReappear(c); break;
      case 'still': persons = planStill(c, e.count ?? 3); break;
      case 'empty': break;
    }
    let frames: number;
    if (e.scenario === 'still') frames = 1;
    else if (e.scenario === 'empty') frames = set === 'test' ? 50 : 100;
    else frames = Math.max(...persons.map((p) => lastFrame(p.walk))) + vrng.int(3, 12);
    const name = `${set}-${String(i + 1).padStart(2, '0')}-${e.scenario}-${W}x${H}`;
    return {
      name,
      scenario: e.scenario,
      width: W,
      height: H,
      frames,
      backgroundStart: vrng.int(0, FOOTAGE_FRAMES - 1),
      view: cameraView(W, H, vrng),
      persons,
      passersby,
      crf: set === 'test' ? 23 : vrng.int(20, 28),
      noiseSigma: vrng.uniform(1, 2.5),
      seed: Math.floor(vrng.next() * 2 ** 31),
      // in turn, so that each look has people of both genders at each size
      ...(set === 'night' ? { night: NIGHT_KINDS[i % NIGHT_KINDS.length] } : e.night ? { night: e.night } : {}),
    };
  });
}
