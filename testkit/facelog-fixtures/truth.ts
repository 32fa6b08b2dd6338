// The ground truth of a generated face-log fixture: which person appears when and where, so tests
// and the benchmark can judge the face log's sightings against it. One `<name>.truth.json` per
// video (or still), and a manifest.json listing them.
import fs from 'node:fs';
import path from 'node:path';

export type Gender = 'male' | 'female';

export const SCENARIOS = ['single', 'sequence', 'crossing', 'occlusion', 'reappear', 'empty', 'still'] as const;
/**
 * single: one person walks towards the camera. sequence: two or three people one after another.
 * crossing: two people whose faces overlap for some frames (two sightings, never merged).
 * occlusion: something passes in front of the face for 5-15 frames (one sighting, never split).
 * reappear: the same person twice with a gap of at least 5 s (two sightings). empty: nobody.
 * still: one JPEG with several faces (an image upload is a one-frame video).
 */
export type Scenario = (typeof SCENARIOS)[number];

/** The visible face in one frame, in output pixels (x/y the top-left corner). */
export interface TruthFaceBox {
  frame: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** At least half of the face box is hidden by something in front of it (OCCLUDED_FRACTION). */
  occluded: boolean;
  /** Share of the face box inside the frame and not hidden (0..1). */
  visible: number;
}

/** A truth face the benches and tests count as findable: at least 30 px wide, unhidden, inside the frame. */
export function isCountedFace(b: TruthFaceBox): boolean {
  return b.width >= 30 && !b.occluded && b.visible >= 0.9;
}

/** One appearance of one person: what the face log should report as one sighting. */
export interface TruthAppearance {
  /** Index of the appearance in the file. */
  id: number;
  /** The person (the same identity in two appearances is the same person). */
  identity: string;
  /** The labelled face picture pasted (an id of testkit/facelog-fixtures/faces.json). */
  face: string;
  gender: Gender;
  start_frame: number;
  end_frame: number;
  /** One box per frame from start_frame to end_frame, in order. */
  boxes: TruthFaceBox[];
}

export interface FacelogTruth {
  name: string;
  scenario: Scenario;
  /** The video (or JPEG) beside this file. */
  file: string;
  width: number;
  height: number;
  fps: number;
  frame_count: number;
  /** Where the background comes from, e.g. `vtest.avi@312`. */
  background: string;
  appearances: TruthAppearance[];
  /**
   * Definitions, repeated in every file so that it can be read alone: a face box is the face from
   * the brows to the chin and from cheek to cheek (what a face detector returns), centred on the
   * pasted face, its size after scaling and the yaw squeeze, in-plane rotation ignored (at most
   * ROLL_LIMIT degrees), clipped to the frame. An appearance holds the frames in which the face is at
   * least half opaque (fade in/out) and at least half of its box is inside the frame; frames in
   * which it is hidden by an occluder or another person stay in it, flagged `occluded`.
   */
  definitions: string;
}

export interface FacelogFixtureVideo {
  name: string;
  scenario: Scenario;
  /** Video (.mp4) or still (.jpg) file name, in the set directory. */
  file: string;
  truth: string;
  width: number;
  height: number;
  frames: number;
  appearances: number;
  crf?: number;
  /** A night video: the look drawn for it (testkit/kamcheck-fixtures/night.ts) and its parameters. */
  night?: Record<string, number | string>;
}

/** test: `make test`'s set; bench: the face-log bench set; night: the bench's design at night. */
export type FacelogSet = 'test' | 'bench' | 'night';

export interface FacelogManifest {
  set: FacelogSet;
  seed: number;
  videos: FacelogFixtureVideo[];
}

export const DEFAULT_FACELOG_FIXTURE_DIR = 'test/fixtures/generated/facelog';
export const DEFAULT_FACELOG_BENCH_DIR = 'test/fixtures/generated/facelog-bench';
export const DEFAULT_FACELOG_NIGHT_DIR = 'test/fixtures/generated/facelog-night';

/** 0.5: a face at least half hidden is "occluded" in the truth. */
export const OCCLUDED_FRACTION = 0.5;

export const TRUTH_DEFINITIONS =
  'face box: brows to chin, cheek to cheek, centred on the pasted face, scaled and squeezed by yaw, roll ignored, clipped to the frame; ' +
  'an appearance holds the frames where the face is at least half opaque and at least half inside the frame; ' +
  'occluded: at least half of the face box hidden by an occluder or a closer person; visible: share of the box inside the frame and not hidden';

export function readFacelogManifest(dir: string): FacelogManifest | undefined {
  const file = path.join(dir, 'manifest.json');
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as FacelogManifest;
}

export function readTruth(file: string): FacelogTruth {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as FacelogTruth;
}

/**
 * A video of a generated face-log set by scenario, by day unless `night` (`make fixtures` makes the
 * test set), with its truth.
 */
export function facelogVideo(scenario: string, dir = DEFAULT_FACELOG_FIXTURE_DIR, night = false): { file: string; truth: FacelogTruth } {
  const manifest = readFacelogManifest(dir);
  if (!manifest) throw new Error(`no face-log fixtures in ${dir}: run \`make fixtures\``);
  const v = manifest.videos.find((x) => x.scenario === scenario && !!x.night === night);
  if (!v) throw new Error(`the set in ${dir} has no ${scenario} video${night ? ' at night' : ''}`);
  return { file: path.join(dir, v.file), truth: readTruth(path.join(dir, v.truth)) };
}
