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
import { parseFixtureArgs } from './fixture-args.js';

const { set, dir, seed } = parseFixtureArgs(process.argv.slice(2), { test: DEFAULT_FIXTURE_DIR, bench: DEFAULT_BENCH_FIXTURE_DIR });
generateFixtureSet(set, dir, (line) => console.log(line), seed).catch((err) => {
  console.error(err);
  process.exit(1);
});
