// Generates the labelled tamper-check fixtures from the footage shipped with Debian's opencv-doc.
//
//   node build/scripts/make-kamcheck-fixtures.js [--set test|bench] [--seed N] [output dir]
//
// --seed gives a set of the same design with other random choices: the calibration constants
// were set on the bench set's own seed (2), so another seed is a held-out evaluation.
// The output dir defaults to test/fixtures/generated/kamcheck (test set) or
// test/fixtures/generated/kamcheck-bench (bench set). Generated files are never committed.
import { DEFAULT_BENCH_FIXTURE_DIR, DEFAULT_FIXTURE_DIR } from '../testkit/kamcheck-fixtures/manifest.js';
import { generateFixtureSet } from '../testkit/kamcheck-fixtures/generate.js';

function parseArgs(argv: string[]): { set: 'test' | 'bench'; dir: string; seed?: number } {
  let set: 'test' | 'bench' = 'test';
  let dir: string | undefined;
  let seed: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--set') {
      const v = argv[++i];
      if (v !== 'test' && v !== 'bench') throw new Error(`--set must be test or bench, got ${v}`);
      set = v;
    } else if (a.startsWith('--set=')) {
      const v = a.slice(6);
      if (v !== 'test' && v !== 'bench') throw new Error(`--set must be test or bench, got ${v}`);
      set = v;
    } else if (a === '--seed') {
      seed = Number(argv[++i]);
      if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number, got ${argv[i]}`);
    } else if (a.startsWith('-')) {
      throw new Error(`unknown option ${a}`);
    } else dir = a;
  }
  return { set, seed, dir: dir ?? (set === 'test' ? DEFAULT_FIXTURE_DIR : DEFAULT_BENCH_FIXTURE_DIR) };
}

const { set, dir, seed } = parseArgs(process.argv.slice(2));
generateFixtureSet(set, dir, (line) => console.log(line), seed).catch((err) => {
  console.error(err);
  process.exit(1);
});
