// The tamper check's analysis against another version of it, on the same decoded clips in one
// process: what a change costs per check, which separate runs of the accuracy bench cannot show
// on a machine whose speed drifts by more than the change. Per case, the two versions run in
// turn (alternating which goes first), several rounds; CPU time of the working-size conversion,
// the measurements and the scoring. Prints per resolution the median per-case ratio, the median
// CPU ms of each, the decode's, and (decode + this) / (decode + other); asserts nothing.
//
//   git worktree add /tmp/other <commit> && ln -s "$PWD/node_modules" /tmp/other/node_modules
//   (cd /tmp/other && node node_modules/.bin/tsc -p tsconfig.json)
//   node build/scripts/bench-kamcheck-paired.js /tmp/other/build [fixture dir] [--kinds a,b] [--rounds N]
//
// The other build must load this checkout's node_modules: OpenCV's binding loaded twice does not
// take the other copy's Mats and Rects ("expected argument 0 to be of type Rect").
//
// The fixture dir defaults to the bench set; --kinds to none, people, rain and shadows (a day's
// ordinary clips), rounds to 5.
import path from 'node:path';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { measureTamper } from '../lib/kamcheck/measure.js';
import { combine, scoreCauses } from '../lib/kamcheck/scorer.js';
import { MAX_TAMPER_FRAMES } from '../lib/kamcheck/limits.js';
import { quantile } from '../lib/stats.js';
import { DEFAULT_BENCH_FIXTURE_DIR } from '../testkit/kamcheck-fixtures/manifest.js';
import { readManifest } from '../testkit/kamcheck-fixtures/generate.js';
import type cv from '../lib/video/opencv.js';
import { cpuMs } from '../testkit/cpu-time.js';

type Analyse = (frames: cv.Mat[], reference: cv.Mat) => number;

async function otherAnalyse(buildDir: string): Promise<Analyse> {
  const measure = await import(path.resolve(buildDir, 'lib/kamcheck/measure.js'));
  const scorer = await import(path.resolve(buildDir, 'lib/kamcheck/scorer.js'));
  return (frames, reference) => scorer.combine(scorer.scoreCauses(measure.measureTamper(frames, reference)));
}

const thisAnalyse: Analyse = (frames, reference) => combine(scoreCauses(measureTamper(frames, reference)));

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const value = args[at + 1];
    args.splice(at, 2);
    return value;
  };
  const kinds = (option('--kinds') ?? 'none,people,rain,shadows').split(',');
  const rounds = Number(option('--rounds') ?? 5);
  const [otherBuild, dir = DEFAULT_BENCH_FIXTURE_DIR] = args;
  if (!otherBuild) throw new Error('usage: bench-kamcheck-paired.js <other build dir> [fixture dir] [--kinds a,b] [--rounds N]');
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`no fixture set in ${dir}: run bench-kamcheck-accuracy.js on it first`);
  const other = await otherAnalyse(otherBuild);
  const byResolution = new Map<string, { ratio: number; mine: number; theirs: number; decode: number }[]>();
  for (const fixture of manifest.cases.filter((c) => kinds.includes(c.kind))) {
    let clip!: { frames: cv.Mat[] };
    let reference!: cv.Mat;
    const decode = cpuMs(() => {
      clip = readVideoFrames(path.join(dir, fixture.id, 'clip.mp4'), MAX_TAMPER_FRAMES + 1);
      reference = readImage(path.join(dir, fixture.id, 'reference.png'));
    });
    const mine: number[] = [];
    const theirs: number[] = [];
    thisAnalyse(clip.frames, reference);
    other(clip.frames, reference);
    for (let r = 0; r < rounds; r++) {
      const runMine = () => mine.push(cpuMs(() => thisAnalyse(clip.frames, reference)));
      const runTheirs = () => theirs.push(cpuMs(() => other(clip.frames, reference)));
      if (r % 2 === 0) {
        runMine();
        runTheirs();
      } else {
        runTheirs();
        runMine();
      }
    }
    const m = quantile(mine, 0.5);
    const t = quantile(theirs, 0.5);
    const key = `${fixture.width}x${fixture.height}`;
    if (!byResolution.has(key)) byResolution.set(key, []);
    byResolution.get(key)!.push({ ratio: m / t, mine: m, theirs: t, decode });
  }
  console.log(`analysis CPU time, this build against ${otherBuild} (${kinds.join(', ')}; ${rounds} rounds, median per case)`);
  console.log('resolution     n  this/other  this ms  other ms  decode ms  (decode+this)/(decode+other)');
  for (const [key, cases] of byResolution) {
    const med = (f: (c: (typeof cases)[number]) => number) => quantile(cases.map(f), 0.5);
    const [mine, theirs, decode] = [med((c) => c.mine), med((c) => c.theirs), med((c) => c.decode)];
    console.log(
      `${key.padEnd(11)} ${String(cases.length).padStart(4)}  ${med((c) => c.ratio).toFixed(3).padStart(10)}  ${mine.toFixed(1).padStart(7)}  ${theirs.toFixed(1).padStart(8)}  ${decode.toFixed(1).padStart(9)}  ${((decode + mine) / (decode + theirs)).toFixed(3).padStart(8)}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
