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
import { parseFixtureArgs } from './fixture-args.js';

const { set, dir, seed } = parseFixtureArgs(process.argv.slice(2), { test: DEFAULT_FACELOG_FIXTURE_DIR, bench: DEFAULT_FACELOG_BENCH_DIR });
generateFacelogSet(set, dir, (line) => console.log(line), seed).catch((err) => {
  console.error(err);
  process.exit(1);
});
