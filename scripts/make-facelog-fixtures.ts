// Generates face-log fixtures with exact ground truth: labelled real faces (testkit/facelog-fixtures/
// faces.json) walking towards a pinch-point camera over real footage (opencv-doc's vtest.avi).
//
//   node build/scripts/make-facelog-fixtures.js [--set test|bench] [--seed N] [output dir]
//
// test: 6 short videos (one per scenario) and a still, under a minute. bench: per resolution
// (640x480, 1280x720, 1920x1080) 17 videos, 31 appearances, both genders equally often.
// --seed gives another draw of the same design (placement, people, timing).
// The output dir defaults to test/fixtures/generated/facelog (test set) or
// test/fixtures/generated/facelog-bench (bench set). Generated files are never committed.
import { DEFAULT_FACELOG_BENCH_DIR, DEFAULT_FACELOG_FIXTURE_DIR } from '../testkit/facelog-fixtures/truth.js';
import { generateFacelogSet } from '../testkit/facelog-fixtures/generate.js';

function parseArgs(argv: string[]): { set: 'test' | 'bench'; dir: string; seed?: number } {
  let set: 'test' | 'bench' = 'test';
  let dir: string | undefined;
  let seed: number | undefined;
  const setValue = (v: string | undefined) => {
    if (v !== 'test' && v !== 'bench') throw new Error(`--set must be test or bench, got ${v}`);
    set = v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--set') setValue(argv[++i]);
    else if (a.startsWith('--set=')) setValue(a.slice(6));
    else if (a === '--seed' || a.startsWith('--seed=')) {
      const v = a === '--seed' ? argv[++i] : a.slice(7);
      seed = Number(v);
      if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number, got ${v}`);
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else dir = a;
  }
  return { set, seed, dir: dir ?? (set === 'test' ? DEFAULT_FACELOG_FIXTURE_DIR : DEFAULT_FACELOG_BENCH_DIR) };
}

const { set, dir, seed } = parseArgs(process.argv.slice(2));
generateFacelogSet(set, dir, (line) => console.log(line), seed).catch((err) => {
  console.error(err);
  process.exit(1);
});
