// What a face log holds in memory per track at the end of its frame loop (issue 39: what grows
// with the video goes to disk). The frame loop runs in-process, with the real models, on the test
// set's 640x480 videos (`make fixtures`) joined and looped 15 and then 30 times (5 and 10 minutes,
// made on first use under test/fixtures/generated/track-memory), each length in a child process
// of its own: a warm-up run on one copy of the loop, a collection, the measured run with its result
// kept, a collection. Held = V8's heap in use plus ArrayBuffers after the measured run, less the
// same before it. The per-track figure is the slope between the two lengths, so what every run
// holds alike (models, caches) drops out; the overlay's cache of drawn track numbers (up to 1000
// labels, output/overlay.ts) stays in it.
//
//   node build/scripts/bench-track-memory.js     # about 7 minutes on 2 cores
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readFrames } from '../lib/video/frame-reader.js';
import { analyseFrames } from '../lib/facelog/analyse.js';
import { faceLogStages } from '../lib/facelog/run.js';
import { faceModels } from '../lib/facelog/models.js';
import { FaceSpill } from '../lib/facelog/track/face-spill.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readFacelogManifest } from '../testkit/facelog-fixtures/truth.js';
import { joinVideos, loopVideo } from '../testkit/looped-video.js';

const CACHE = path.resolve('test/fixtures/generated/track-memory');
const WIDTH = 640;
const HEIGHT = 480;
const LENGTHS = [15, 30];

interface Measured {
  copies: number;
  tracks: number;
  faces: number;
  heldBytes: number;
}

/** The test set's 640x480 videos joined into one (re-encoded: their headers differ). */
function loopUnit(): string {
  const file = path.join(CACHE, 'unit-640x480.mp4');
  if (fs.existsSync(file)) return file;
  const manifest = readFacelogManifest(DEFAULT_FACELOG_FIXTURE_DIR);
  if (!manifest) throw new Error(`no face-log fixtures in ${DEFAULT_FACELOG_FIXTURE_DIR}: run \`make fixtures\``);
  const videos = manifest.videos.filter((v) => v.file.endsWith(`-${WIDTH}x${HEIGHT}.mp4`) && !v.night).map((v) => path.join(DEFAULT_FACELOG_FIXTURE_DIR, v.file));
  fs.mkdirSync(CACHE, { recursive: true });
  joinVideos(videos, file, 25);
  return file;
}

/** The unit looped `copies` times by stream copy. */
function looped(unit: string, copies: number): string {
  const file = path.join(CACHE, `loop-${copies}.mp4`);
  if (!fs.existsSync(file)) loopVideo(unit, copies, file);
  return file;
}

async function frameLoop(file: string, work: string) {
  const models = faceModels();
  const options = { width: WIDTH, height: HEIGHT, fps: 25, minSize: 30, totalFrames: 0, still: false, cropsDir: path.join(work, 'crops') };
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(options.cropsDir, { recursive: true });
  const spill = new FaceSpill(path.join(work, 'faces.spill'));
  const result = await analyseFrames(
    readFrames(file, { width: WIDTH, height: HEIGHT }),
    { write: async () => {} },
    faceLogStages(models.detector, options, spill),
    { describe: (f, d) => models.describer.describe(f, d), classifyGender: (f, d) => models.gender.classify(f, d) },
    options,
    () => {},
  );
  return { result, spill };
}

function inUse(): number {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** In the child: a warm-up run, then the measured one. */
async function measure(unit: string, copies: number): Promise<Measured> {
  const work = path.join(CACHE, `work-${process.pid}`);
  await frameLoop(unit, work);
  const before = inUse();
  const kept = await frameLoop(looped(unit, copies), work);
  const heldBytes = inUse() - before;
  const { tracks } = kept.result;
  kept.spill.close();
  fs.rmSync(work, { recursive: true, force: true });
  return { copies, tracks: tracks.length, faces: tracks.reduce((n, t) => n + t.faceCount, 0), heldBytes };
}

async function main() {
  const child = process.argv.indexOf('--child');
  if (child >= 0) {
    const result = await measure(process.argv[child + 1], Number(process.argv[child + 2]));
    process.stdout.write(JSON.stringify(result));
    return;
  }
  const unit = loopUnit();
  for (const copies of LENGTHS) looped(unit, copies);
  const runs: Measured[] = [];
  for (const copies of LENGTHS) {
    // Exact collections: without this flag freed ArrayBuffers leave on a later sweep.
    const out = execFileSync(process.execPath, ['--expose-gc', '--no-concurrent-array-buffer-sweeping', process.argv[1], '--child', unit, String(copies)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const run = JSON.parse(String(out)) as Measured;
    runs.push(run);
    console.log(`${copies} copies: ${run.tracks} tracks, ${run.faces} faces, ${(run.heldBytes / 1024).toFixed(0)} KiB held`);
  }
  const [a, b] = runs;
  console.log(`per track: ${((b.heldBytes - a.heldBytes) / (b.tracks - a.tracks)).toFixed(0)} bytes (the slope between ${a.copies} and ${b.copies} copies)`);
}

await main();
