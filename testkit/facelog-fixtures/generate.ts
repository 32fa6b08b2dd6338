// Generates a face-log fixture set on disk: <dir>/<name>.mp4 (or .jpg for a still) with its
// <name>.truth.json, and manifest.json. The truth is measured on the frames as they are drawn.
import fs from 'node:fs';
import path from 'node:path';
import cv from '../../lib/video/opencv.js';
import { NoiseBank } from '../kamcheck-fixtures/scenes.js';
import { Prng } from '../kamcheck-fixtures/prng.js';
import { irSwitch, nightLook, type NightLook } from '../kamcheck-fixtures/night.js';
import { clipBox, coverage, drawPasserby, drawPerson, faceBox, passerbyShapes, personShapes, type Box, type Polygon } from './compose.js';
import { H264Writer } from './encode.js';
import { HeadSprites, loadFaceList } from './faces.js';
import { Footage, renderBackground } from './footage.js';
import { FPS, MIN_IN_FRAME, MIN_OPACITY, planSet, SET_SEEDS, type VideoPlan } from './scenarios.js';
import {
  OCCLUDED_FRACTION, TRUTH_DEFINITIONS, type FacelogFixtureVideo, type FacelogManifest, type FacelogSet, type FacelogTruth,
  type TruthAppearance, type TruthFaceBox,
} from './truth.js';
import { poseAt } from './walk.js';
import { emptyFixtureDir } from '../fixture-dir.js';

/** Encodes finishing in ffmpeg while the next fixture is drawn; 2 matches the appliance's cores. */
const PARALLEL_ENCODES = 2;
/** JPEG quality of the stills (a camera snapshot). */
const STILL_QUALITY = 92;

export interface RenderContext {
  footage: Footage;
  sprites: HeadSprites;
  noise: NoiseBank;
}

/** One person's face in one drawn frame. */
export interface FaceInFrame {
  person: number;
  /** Unclipped face box. */
  box: Box;
  inFrame: number;
  hidden: number;
  opacity: number;
}

/**
 * Draws frame t: background, people far to near, passers-by in front; measures what hides each
 * face. A night video's look then darkens the whole frame, and its gain brings its own noise.
 */
export function renderFrame(plan: VideoPlan, t: number, ctx: RenderContext, rng: Prng, night?: NightLook): { frame: cv.Mat; faces: FaceInFrame[] } {
  const { width: W, height: H } = plan;
  const frame = renderBackground(ctx.footage, plan.backgroundStart, t, plan.view, W, H);
  const people = plan.persons
    .map((p, i) => {
      const pose = poseAt(p.walk, t);
      const look = { sprite: ctx.sprites.get(p.face), clothes: p.clothes };
      return { i, pose, look, shapes: pose && personShapes(look, pose) };
    })
    .filter((x) => x.pose && x.pose.opacity > 0)
    .sort((a, b) => a.pose!.faceWidth - b.pose!.faceWidth);
  const passers = plan.passersby.map((p) => ({ p, shapes: passerbyShapes(p, t, H) }));
  const faces = people.map((d, k) => {
    // a face is hidden by whatever is drawn after it: nearer people (if not mostly transparent) and passers-by
    const hiders: Polygon[] = [
      ...people.slice(k + 1).filter((o) => o.pose!.opacity >= MIN_OPACITY).flatMap((o) => [o.shapes!.head, o.shapes!.neck, o.shapes!.torso]),
      ...passers.flatMap((q) => [q.shapes.body, q.shapes.head]),
    ];
    const box = faceBox(d.look.sprite, d.pose!);
    const { inFrame, hidden } = coverage(box, W, H, hiders);
    return { person: d.i, box, inFrame, hidden, opacity: d.pose!.opacity };
  });
  for (const d of people) drawPerson(frame, d.look, d.pose!, d.shapes!);
  for (const q of passers) drawPasserby(frame, q.p, q.shapes);
  if (!night) return { frame: ctx.noise.addNoise(frame, plan.noiseSigma, rng), faces };
  return { frame: ctx.noise.addNoise(night.apply(frame), night.noiseSigma, rng), faces };
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/** Collects the per-frame face boxes of every person and turns them into appearances. */
class TruthRecorder {
  private readonly boxes: TruthFaceBox[][];

  constructor(private readonly plan: VideoPlan) {
    this.boxes = plan.persons.map(() => []);
  }

  add(t: number, faces: FaceInFrame[]): void {
    const { width: W, height: H } = this.plan;
    for (const f of faces) {
      if (f.opacity < MIN_OPACITY || f.inFrame < MIN_IN_FRAME) continue;
      const b = clipBox(f.box, W, H)!;
      const x = round1(b.x);
      const y = round1(b.y);
      this.boxes[f.person].push({
        frame: t,
        x,
        y,
        width: round1(Math.min(W, b.x + b.width) - x),
        height: round1(Math.min(H, b.y + b.height) - y),
        occluded: f.hidden >= OCCLUDED_FRACTION,
        visible: Math.round(f.inFrame * (1 - f.hidden) * 1000) / 1000,
      });
    }
  }

  truth(file: string, frameCount: number): FacelogTruth {
    const appearances: TruthAppearance[] = this.plan.persons.map((p, i) => {
      const boxes = this.boxes[i];
      if (boxes.length === 0) throw new Error(`${this.plan.name}: person ${i} (${p.face.id}) is never visible`);
      const start = boxes[0].frame;
      const end = boxes[boxes.length - 1].frame;
      if (boxes.length !== end - start + 1) throw new Error(`${this.plan.name}: person ${i} (${p.face.id}) is visible with gaps`);
      return { id: i, identity: p.face.identity, face: p.face.id, gender: p.face.gender, start_frame: start, end_frame: end, boxes };
    });
    appearances.sort((a, b) => a.start_frame - b.start_frame || a.id - b.id);
    appearances.forEach((a, k) => (a.id = k));
    return {
      name: this.plan.name,
      scenario: this.plan.scenario,
      file,
      width: this.plan.width,
      height: this.plan.height,
      fps: FPS,
      frame_count: frameCount,
      background: `vtest.avi@${this.plan.backgroundStart}`,
      appearances,
      definitions: TRUTH_DEFINITIONS,
    };
  }
}

/** Draws one fixture; a video is streamed into `encodes` (its promise), a still written at once. */
async function renderFixture(plan: VideoPlan, dir: string, ctx: RenderContext, pending: Set<Promise<void>>): Promise<FacelogFixtureVideo> {
  const rng = new Prng(plan.seed);
  const recorder = new TruthRecorder(plan);
  const isStill = plan.scenario === 'still';
  const nightParams: Record<string, number | string> = {};
  const night = plan.night && nightLookOf(plan, nightParams);
  const file = `${plan.name}.${isStill ? 'jpg' : 'mp4'}`;
  if (isStill) {
    const { frame, faces } = renderFrame(plan, 0, ctx, rng, night);
    recorder.add(0, faces);
    cv.imwrite(path.join(dir, file), frame, [cv.IMWRITE_JPEG_QUALITY, STILL_QUALITY]);
  } else {
    const writer = new H264Writer(path.join(dir, file), plan.width, plan.height, { crf: plan.crf, fps: FPS });
    for (let t = 0; t < plan.frames; t++) {
      const { frame, faces } = renderFrame(plan, t, ctx, rng, night);
      recorder.add(t, faces);
      await writer.write(frame);
    }
    const job = writer.finish().finally(() => pending.delete(job));
    pending.add(job);
  }
  const truth = recorder.truth(file, plan.frames);
  const truthFile = `${plan.name}.truth.json`;
  fs.writeFileSync(path.join(dir, truthFile), JSON.stringify(truth));
  return {
    name: plan.name,
    scenario: plan.scenario,
    file,
    truth: truthFile,
    width: plan.width,
    height: plan.height,
    frames: plan.frames,
    appearances: truth.appearances.length,
    ...(isStill ? {} : { crf: plan.crf }),
    ...(night ? { night: { kind: plan.night!, ...nightParams } } : {}),
  };
}

/** The night look of a video, drawn once from its own seed; its parameters go into `params`. */
function nightLookOf(plan: VideoPlan, params: Record<string, number | string>): NightLook {
  const rng = new Prng(plan.seed ^ 0x6e1647);
  return plan.night === 'ir' ? irSwitch(rng, plan.width, plan.height, params) : nightLook(rng, plan.night!, params);
}

export async function generateFacelogSet(
  set: FacelogSet,
  dir: string,
  log: (line: string) => void = () => undefined,
  seed: number = SET_SEEDS[set],
): Promise<FacelogManifest> {
  const started = Date.now();
  const sprites = new HeadSprites();
  const plans = planSet(set, loadFaceList(), sprites, seed);
  const ctx: RenderContext = { footage: Footage.load(), sprites, noise: new NoiseBank(new Prng(seed * 7919)) };
  emptyFixtureDir(dir, set, seed);
  const videos: FacelogFixtureVideo[] = [];
  const pending = new Set<Promise<void>>();
  for (const plan of plans) {
    const t0 = Date.now();
    videos.push(await renderFixture(plan, dir, ctx, pending));
    log(`${plan.name}: ${plan.frames} frames, ${videos[videos.length - 1].appearances} appearances, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    while (pending.size >= PARALLEL_ENCODES) await Promise.race(pending);
  }
  await Promise.all(pending);
  const manifest: FacelogManifest = { set, seed, videos };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
  const appearances = videos.reduce((n, v) => n + v.appearances, 0);
  log(`${videos.length} fixtures, ${appearances} appearances in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return manifest;
}
