// Generates a labelled fixture set on disk: <dir>/<id>/reference.png + clip.mp4, and manifest.json.
import fs from 'node:fs';
import path from 'node:path';
import cv from '../../lib/video/opencv.js';
import { FixtureCase, FixtureManifest } from './manifest.js';
import { planSet, renderCase, SET_SEEDS, toManifestCase, vtestFramesNeeded } from './cases.js';
import { loadVtestFrames, NoiseBank } from './scenes.js';
import { encodeH264 } from './encode.js';
import { Prng } from './prng.js';
import { emptyFixtureDir } from '../fixture-dir.js';

/** Encodes run in ffmpeg processes while the next case renders; 2 matches the appliance's 2 cores. */
const PARALLEL_ENCODES = 2;

export async function generateFixtureSet(
  set: 'test' | 'bench',
  dir: string,
  log: (line: string) => void = () => undefined,
  seed: number = SET_SEEDS[set],
  /** Only the cases of these kinds (ids and draws stay those of the whole set). */
  kinds?: readonly string[],
  /** Only these cases of those kinds: each is drawn as in the set of `kinds` (a test's few cases of a bench set). */
  ids?: readonly string[],
): Promise<FixtureManifest> {
  const started = Date.now();
  const ofKinds = planSet(set, seed).filter((p) => !kinds || kinds.includes(p.kind));
  const plans = ofKinds.filter((p) => !ids || ids.includes(p.id));
  const vtest = loadVtestFrames(vtestFramesNeeded(plans));
  const noise = new NoiseBank(new Prng(seed * 7919));
  // the bank draws its noise fields per picture size on first use: drawn in the order the whole
  // set of `kinds` first uses each size, a case gets the same noise alone as in its set
  noise.prepare(ofKinds.map((p) => [p.width, p.height]));
  emptyFixtureDir(dir, set, seed);

  const cases: FixtureCase[] = [];
  const pending = new Set<Promise<void>>();
  for (const plan of plans) {
    const rendered = renderCase(plan, vtest, noise);
    const caseDir = path.join(dir, plan.id);
    fs.mkdirSync(caseDir, { recursive: true });
    cv.imwrite(path.join(caseDir, 'reference.png'), rendered.reference);
    cases.push(toManifestCase(plan, rendered));
    const job = encodeH264(rendered.frames, path.join(caseDir, 'clip.mp4'), { crf: rendered.crf }).then(() => {
      pending.delete(job);
    });
    pending.add(job);
    if (pending.size >= PARALLEL_ENCODES) await Promise.race(pending);
    if (cases.length % 20 === 0) log(`${cases.length}/${plans.length} cases, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  await Promise.all(pending);
  const manifest: FixtureManifest = { set, seed, cases };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
  log(`${cases.length} cases in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return manifest;
}

export function readManifest(dir: string): FixtureManifest | undefined {
  const file = path.join(dir, 'manifest.json');
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureManifest;
}
