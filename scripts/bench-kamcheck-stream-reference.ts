// Every case of a fixture set checked against a reference taken from the camera's own stream, as a
// camera of the appliance is checked once its slot is learned or renewed (kamcheck/refresh.ts),
// beside the case's own reference (a render that never went through an encoder). The stream
// reference: the case's scene rendered with nothing happening in it (kind `none`, a window of the
// reference's moment for vtest.avi), encoded at the case's CRF, the per-pixel median of its spread
// frames, through JPEG at the renewal's quality. The encoder took from that reference the fine
// detail it takes from the clip, so what tells a defocus from it is the defocus alone. Day kinds
// only: a night case's reference is a day or a night picture by draw (night.ts). Prints per kind
// the share at probability >= 50 against each reference and the median probability. Asserts nothing.
//
//   node build/scripts/bench-kamcheck-stream-reference.js [fixture dir] [--kinds a,b]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import cv from '../lib/video/opencv.js';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { spread } from '../lib/kamcheck/cells.js';
import { renewalPicture, REFRESH_JPEG_QUALITY } from '../lib/kamcheck/refresh.js';
import { MAX_TAMPER_FRAMES } from '../lib/kamcheck/limits.js';
import { median } from '../lib/stats.js';
import { DEFAULT_BENCH_FIXTURE_DIR } from '../testkit/kamcheck-fixtures/manifest.js';
import { readManifest } from '../testkit/kamcheck-fixtures/generate.js';
import { CasePlan, planSet, renderCase, rendersAtNight, vtestFramesNeeded } from '../testkit/kamcheck-fixtures/cases.js';
import { compressed } from '../testkit/kamcheck-fixtures/effects.js';
import { loadVtestFrames, NoiseBank, VTEST_FRAMES } from '../testkit/kamcheck-fixtures/scenes.js';
import { encodeH264 } from '../testkit/kamcheck-fixtures/encode.js';
import { Prng } from '../testkit/kamcheck-fixtures/prng.js';

const ALARM = 50;

/** The case's scene with nothing happening, at the time of its reference where the scene is a video. */
function quietPlan(plan: CasePlan): CasePlan {
  const scene = plan.scene.type === 'vtest'
    ? { ...plan.scene, clipStart: Math.min(Math.max(0, plan.scene.refFrame - Math.floor(plan.frames / 2)), VTEST_FRAMES - plan.frames - 1) }
    : plan.scene;
  return { ...plan, kind: 'none', scene };
}

async function streamReference(plan: CasePlan, vtest: Map<number, cv.Mat>, noise: NoiseBank, crf: number, tmp: string): Promise<cv.Mat> {
  const rendered = renderCase(quietPlan(plan), vtest, noise);
  const file = path.join(tmp, `${plan.id}.mp4`);
  await encodeH264(rendered.frames, file, { crf });
  const frames = readVideoFrames(file, MAX_TAMPER_FRAMES + 1).frames;
  fs.rmSync(file);
  const picture = renewalPicture(spread(frames));
  return compressed(picture, REFRESH_JPEG_QUALITY);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--kinds');
  const kindsArg = at >= 0 ? args.splice(at, 2)[1].split(',') : null;
  const dir = args[0] ?? DEFAULT_BENCH_FIXTURE_DIR;
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`no fixture set in ${dir}`);
  const byId = new Map(manifest.cases.map((c) => [c.id, c]));
  const plans = planSet(manifest.set, manifest.seed)
    .filter((p) => byId.has(p.id) && !rendersAtNight(p.kind) && (!kindsArg || kindsArg.includes(p.kind)));
  const quiet = plans.map(quietPlan);
  const vtest = loadVtestFrames(vtestFramesNeeded(quiet));
  const noise = new NoiseBank(new Prng(manifest.seed * 7919 + 1));
  noise.prepare(quiet.map((p) => [p.width, p.height]));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stream-reference-'));
  const tally = new Map<string, { label: string; own: number[]; stream: number[] }>();
  try {
    for (const plan of plans) {
      const c = byId.get(plan.id)!;
      const clip = readVideoFrames(path.join(dir, c.id, 'clip.mp4'), MAX_TAMPER_FRAMES + 1).frames;
      const reference = await streamReference(plan, vtest, noise, c.crf, tmp);
      const t = tally.get(c.kind) ?? { label: c.label, own: [], stream: [] };
      t.own.push(analyseTamper(clip, readImage(path.join(dir, c.id, 'reference.png'))).probability);
      t.stream.push(analyseTamper(clip, reference).probability);
      tally.set(c.kind, t);
      console.error(`${c.id}: own ${t.own[t.own.length - 1]}, stream ${t.stream[t.stream.length - 1]}`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const share = (ps: number[]) => `${Math.round((100 * ps.filter((p) => p >= ALARM).length) / ps.length)}% (${Math.round(median(ps))})`;
  console.log(`Cases of ${dir} against their own reference and a reference from their stream; share at >= ${ALARM} (median probability):`);
  console.log('| kind | label | cases | case reference | stream reference |');
  console.log('|---|---|---|---|---|');
  for (const [kind, t] of tally) console.log(`| ${kind} | ${t.label} | ${t.own.length} | ${share(t.own)} | ${share(t.stream)} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
