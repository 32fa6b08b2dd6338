// Generates face-log fixtures with exact ground truth: labelled real faces (testkit/facelog-fixtures/
// faces.json) walking towards a pinch-point camera over real footage (opencv-doc's vtest.avi).
//
//   node build/scripts/make-facelog-fixtures.js [--set test|bench|night] [--seed N] [output dir]
//
// test: 7 short videos (one per scenario, and a sequence at night) and a still, under a minute. bench: per resolution
// (640x480, 1280x720, 1920x1080) 17 videos, 31 appearances, both genders equally often. night:
// the bench's design at 640x480 and 1280x720, each video in low light, darker, or infrared.
// --seed gives another draw of the same design (placement, people, timing).
// The output dir defaults to test/fixtures/generated/facelog (test set),
// test/fixtures/generated/facelog-bench (bench set) or test/fixtures/generated/facelog-night.
// Generated files are never committed.
import { DEFAULT_FACELOG_BENCH_DIR, DEFAULT_FACELOG_FIXTURE_DIR, DEFAULT_FACELOG_NIGHT_DIR } from '../testkit/facelog-fixtures/truth.js';
import { generateFacelogSet } from '../testkit/facelog-fixtures/generate.js';
import { parseFixtureArgs } from './fixture-args.js';

const { set, dir, seed } = parseFixtureArgs(process.argv.slice(2), { test: DEFAULT_FACELOG_FIXTURE_DIR, bench: DEFAULT_FACELOG_BENCH_DIR, night: DEFAULT_FACELOG_NIGHT_DIR });
generateFacelogSet(set, dir, (line) => console.log(line), seed).catch((err) => {
  console.error(err);
  process.exit(1);
});
