// A test's few cases of the bench's draws, each drawn alone exactly as in its set
// (generateFixtureSet's ids give the same reference and clip bytes), and read back.
import path from 'node:path';
import type cv from '../../lib/video/opencv.js';
import { readImage, readVideoFrames } from '../../lib/video/decode.js';
import { MAX_TAMPER_FRAMES } from '../../lib/kamcheck/limits.js';
import { generateFixtureSet } from './generate.js';
import type { CaseKind, FixtureCase } from './manifest.js';

/** Cases `ids` of the bench draw of `seed`, drawn as in its set of `kinds`. */
export interface Draw {
  seed: number;
  kinds: readonly CaseKind[];
  ids: readonly string[];
}

export type DrawnCase = FixtureCase & { dir: string };

/**
 * Generates each draw under `dir`, in a folder of its own (generateFixtureSet empties its folder
 * and writes its manifest, so two draws of one seed cannot share one), and returns every case by id.
 */
export async function drawCases(dir: string, draws: readonly Draw[]): Promise<Map<string, DrawnCase>> {
  const cases = new Map<string, DrawnCase>();
  for (const [n, draw] of draws.entries()) {
    const drawDir = path.join(dir, `draw${n}-seed${draw.seed}`);
    const manifest = await generateFixtureSet('bench', drawDir, undefined, draw.seed, draw.kinds, draw.ids);
    const drawn = manifest.cases.map((c) => c.id).sort();
    if (drawn.join() !== [...draw.ids].sort().join()) throw new Error(`seed ${draw.seed} drew ${drawn.join(', ')} instead of ${draw.ids.join(', ')}`);
    for (const c of manifest.cases) cases.set(c.id, { ...c, dir: drawDir });
  }
  return cases;
}

/** A drawn case's clip frames (all of them, as a check reads up to one past the limit) and reference picture. */
export function readDrawnCase(c: DrawnCase): { frames: cv.Mat[]; reference: cv.Mat } {
  return {
    frames: readVideoFrames(path.join(c.dir, c.id, 'clip.mp4'), MAX_TAMPER_FRAMES + 1).frames,
    reference: readImage(path.join(c.dir, c.id, 'reference.png')),
  };
}
