// Generates the labelled tamper-check fixtures from the footage shipped with Debian's opencv-doc.
//
//   node build/scripts/make-kamcheck-fixtures.js [--set test|bench] [output dir]
//
// The output dir defaults to test/fixtures/generated/kamcheck (test set) or
// test/fixtures/generated/kamcheck-bench (bench set). Generated files are never committed.
import { DEFAULT_BENCH_FIXTURE_DIR, DEFAULT_FIXTURE_DIR } from './kamcheck-fixtures/manifest.js';
import { generateFixtureSet } from './kamcheck-fixtures/generate.js';

function parseArgs(argv: string[]): { set: 'test' | 'bench'; dir: string } {
  let set: 'test' | 'bench' = 'test';
  let dir: string | undefined;
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
    } else if (a.startsWith('-')) {
      throw new Error(`unknown option ${a}`);
    } else dir = a;
  }
  return { set, dir: dir ?? (set === 'test' ? DEFAULT_FIXTURE_DIR : DEFAULT_BENCH_FIXTURE_DIR) };
}

const { set, dir } = parseArgs(process.argv.slice(2));
generateFixtureSet(set, dir, (line) => console.log(line)).catch((err) => {
  console.error(err);
  process.exit(1);
});
