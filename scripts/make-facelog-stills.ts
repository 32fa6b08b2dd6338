// Generates still-image face-log fixtures with exact ground truth (testkit/facelog-fixtures/stills.ts):
// real labelled faces 30-200 px wide, both genders, on textured real pictures; some with no face.
//
//   node build/scripts/make-facelog-stills.js [--set test|bench] [--seed N] [--count N] [output dir]
//
// test: the two stills of test/47 (faces on a textured picture, and texture only), in a second.
// bench: 60 stills of draw --seed (default 11, the calibration draw; 12 is the held-out draw).
// The output dir defaults to test/fixtures/generated/facelog-stills (test) or
// test/fixtures/generated/facelog-stills-bench (bench). Generated files are never committed.
import { DEFAULT_STILLS_BENCH_DIR, DEFAULT_STILLS_DIR, generateStills, generateTestStills, STILLS_BENCH_COUNT, STILLS_SEEDS } from '../testkit/facelog-fixtures/stills.js';

function parseArgs(argv: string[]) {
  let set: 'test' | 'bench' = 'test';
  let dir: string | undefined;
  let seed: number = STILLS_SEEDS.calibration;
  let count = STILLS_BENCH_COUNT;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--set') {
      const v = argv[++i];
      if (v !== 'test' && v !== 'bench') throw new Error(`--set must be test or bench, got ${v}`);
      set = v;
    } else if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '--count') count = Number(argv[++i]);
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else dir = a;
  }
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number`);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--count must be a positive whole number`);
  return { set, seed, count, dir: dir ?? (set === 'test' ? DEFAULT_STILLS_DIR : DEFAULT_STILLS_BENCH_DIR) };
}

const { set, seed, count, dir } = parseArgs(process.argv.slice(2));
const log = (line: string) => console.log(line);
if (set === 'test') generateTestStills(dir, log);
else generateStills(dir, count, seed, log);
