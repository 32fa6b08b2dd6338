// Where a worker's CPU goes in one 720p tamper check (25 frames, 1280x720 JPEG reference), stage
// by stage, the way the worker ran it before the fleet work and the way it runs it now. Each way
// runs in its own child process with the allocator settings the worker had then (glibc's
// defaults) and has now (lib/jobs/worker-pool.ts), twice each, alternating; CPU time per stage,
// median of the rounds. Prints a table; asserts nothing.
//
//   node build/scripts/bench-kamcheck-stages.js [--rounds N]
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile } from '../lib/stats.js';
import { WORKER_MALLOC_ENV, WORKER_V8_FLAGS } from '../lib/jobs/worker-pool.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';
import { cpuMs } from '../testkit/cpu-time.js';

type Stages = Record<string, number[]>;

async function child(way: 'before' | 'now', rounds: number, clip: string, reference: string): Promise<void> {
  const cv = (await import('../lib/video/opencv.js')).default;
  const { readImage, readVideoFrames } = await import('../lib/video/decode.js');
  const { toWorking, workingSize, spread } = await import('../lib/kamcheck/cells.js');
  const { analyseWorking } = await import('../lib/kamcheck/analyse.js');
  const { readWorkingClip } = await import('../lib/kamcheck/clip.js');
  const { clearReferenceCache, loadReference } = await import('../lib/kamcheck/reference.js');
  const { quietestFrame, renewalPicture, writeCameraPicture } = await import('../lib/kamcheck/refresh.js');
  const gc = (globalThis as { gc?: () => void }).gc!;
  const stages: Stages = {};
  const add = (name: string, ms: number) => (stages[name] ??= []).push(ms);
  // laid out as a data file (<dir>/<folder>/<2 hex>/<name>), so that its thumbnail goes beside it, under dir
  const refresh = path.join(path.dirname(clip), 'references', 're', `refresh-${process.pid}.jpg`);
  for (let round = 0; round < rounds + 1; round++) {
    const record = round > 0 ? add : () => undefined; // round 0 warms up
    if (way === 'before') {
      let frames: InstanceType<typeof cv.Mat>[] = [];
      let ref: InstanceType<typeof cv.Mat> | null = null;
      record('(of which: opening the clip; not in the total)', cpuMs(() => new cv.VideoCapture(clip).release()));
      record('decode the clip (frames kept: all 25)', cpuMs(() => (frames = readVideoFrames(clip, 26).frames)));
      record('decode the reference (whole JPEG)', cpuMs(() => (ref = readImage(reference))));
      const size = workingSize(ref!.cols, ref!.rows);
      let working: ReturnType<typeof toWorking>[] = [];
      let refWorking: ReturnType<typeof toWorking> | null = null;
      record('reduce the reference and the 9 spread frames to the working size', cpuMs(() => ((refWorking = toWorking(ref!, size)), (working = spread(frames).map((f) => toWorking(f, size))))));
      record('analysis', cpuMs(() => analyseWorking(refWorking!, working, size)));
      record('garbage collection after the job', cpuMs(gc));
    } else {
      clearReferenceCache(); // a fleet's camera is rarely in the cache
      let ref: ReturnType<typeof loadReference> | null = null;
      record('(of which: opening the clip; not in the total)', cpuMs(() => new cv.VideoCapture(clip).release()));
      record('decode the reference (whole JPEG)', cpuMs(() => (ref = loadReference(reference))));
      let read: ReturnType<typeof readWorkingClip> | null = null;
      const decodeAndReduce = cpuMs(() => (read = readWorkingClip(clip, { maxFrames: 25, keepFull: true, sizeFor: () => ref!.size })));
      record('decode the clip (each frame released at once but the 9 spread ones; those reduced as decoded, kept for a refresh)', decodeAndReduce);
      record('analysis', cpuMs(() => analyseWorking(ref!.working, read!.working, ref!.size)));
      record('refresh (a check that renews): median of the 9 spread frames, JPEG q95 and thumbnail, write', cpuMs(() => {
        const picture = renewalPicture(read!.full);
        writeCameraPicture(refresh, picture);
        picture.release();
      }));
      // what a renewal wrote before the median, for the cost of the median in the same run; not in the total
      record('(a renewal from the quietest frame instead; not in the total)', cpuMs(() => writeCameraPicture(refresh, read!.full[quietestFrame(read!.working.map((w) => w.gray))])));
      for (const f of read!.full) f.release();
      record('garbage collection after the job (now at most once a second)', cpuMs(gc));
    }
  }
  process.send!(stages);
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--rounds');
  const rounds = at >= 0 ? Number(process.argv[at + 1]) : 10;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stages-'));
  const clip = path.join(dir, 'clip.mp4');
  const reference = path.join(dir, 'reference.jpg');
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-ss', '40', '-i', VTEST_AVI, '-frames:v', '25', '-vf', 'scale=1280:720', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-ss', '39', '-i', VTEST_AVI, '-frames:v', '1', '-vf', 'scale=1280:720', '-q:v', '2', reference]);
  const script = fileURLToPath(import.meta.url);
  const results: Record<string, Stages> = { before: {}, now: {} };
  try {
    for (const way of ['before', 'now', 'before', 'now'] as const) {
      const env = way === 'now' ? { ...WORKER_MALLOC_ENV, ...process.env } : process.env;
      const proc = fork(script, ['--child', way, String(rounds), clip, reference], { env, execArgv: WORKER_V8_FLAGS });
      const stages = await new Promise<Stages>((resolve) => proc.once('message', (m) => resolve(m as Stages)));
      await new Promise((r) => proc.once('exit', r));
      for (const [name, ms] of Object.entries(stages)) (results[way][name] ??= []).push(...ms);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nWorker CPU ms per 720p check, by stage (median of ${2 * rounds} rounds; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  console.log('| stage | before | now |\n|---|---|---|');
  const names = [...new Set([...Object.keys(results.before), ...Object.keys(results.now)])];
  const cell = (xs?: number[]) => (xs ? quantile(xs, 0.5).toFixed(1) : '-');
  for (const name of names) console.log(`| ${name} | ${cell(results.before[name])} | ${cell(results.now[name])} |`);
  const total = (way: string) => Object.entries(results[way]).reduce((s, [name, xs]) => (name.startsWith('(') ? s : s + quantile(xs, 0.5)), 0);
  console.log(`| total | ${total('before').toFixed(1)} | ${total('now').toFixed(1)} |`);
}

if (process.argv[2] === '--child') {
  void child(process.argv[3] as 'before' | 'now', Number(process.argv[4]), process.argv[5], process.argv[6]);
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
