// `make bench`: memory and speed of one face log on a long 1080p video (targets: service RSS
// under 300 MB and each worker under 1 GB while a 10-minute 1080p video is processed). Starts the
// service as a real process on its defaults (WORKERS = cores, ...) in a temporary DATA_DIR,
// uploads the video over HTTP, and while the job runs reads the resident memory of the service,
// its worker processes and their ffmpeg children from /proc every second (VmRSS, and VmHWM, the
// kernel's own peak, so spikes between two samples count too). Prints the peak per kind of
// process, the worker's memory over the job, the job's duration, fps, x real time, and its ratio
// to ffmpeg decoding the same video to BGR frames into a pipe that drops them, to /dev/null, and
// to the face log's own decoder and encoder with no analysis between them (testkit/decode-baseline.ts),
// then the CPU the job took (the worker's and its ffmpeg children's, from /proc) and the least
// time that CPU needs on all the machine's cores.
// Exits 1 when the job fails or a memory target is missed.
//
// The video: the 1080p face-log bench videos (test/fixtures/generated/facelog-bench, from
// `bench-facelog.js`; people walking through vtest.avi's street with pasted faces), joined into
// one segment of about 2.3 minutes, then looped by stream copy to the length asked for; without
// the bench set, vtest.avi itself scaled to 1920x1080 at 25 fps (no faces). Cached under
// test/fixtures/generated/long-video.
//
// Options: --minutes N (10; the face log runs at about 2.4x real time at 1080p on 2 cores, so
//          the default takes about 4.5 minutes after 6.5 of the three baselines; --minutes 2 for a quick run)
//          --resolution WxH (1920x1080; 1280x720 or 640x480: the bench set's videos of that size)
//          --no-baselines (memory only: skips the three decodes, and so the ratios to them)
// The job's time limit is the service's default (60 s + FACE_LOG_MS_PER_FRAME 400 ms per frame,
// 101 minutes for 10 minutes of video); set FACE_LOG_MS_PER_FRAME in the environment to change it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnService, stopServiceOnSignals } from '../testkit/service.js';
import { decodeBaseline } from '../testkit/decode-baseline.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';
import { procChildren, procCpuMs } from '../lib/proc-stats.js';
import { TreeMemory, kindOf, maxPerTenth, flatnessLine } from '../testkit/tree-memory.js';
import { joinVideos, loopVideo, segmentEncoding } from '../testkit/looped-video.js';
import { ffmpeg } from '../testkit/ffmpeg.js';

const CACHE = path.resolve('test/fixtures/generated/long-video');
const BENCH_SET = path.resolve('test/fixtures/generated/facelog-bench');
/** --resolution WxH: that of the bench set's videos to join (1920x1080 by default, 1280x720 or 640x480). */
const [WIDTH, HEIGHT] = resolutionArg();
const FPS = 25;
const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
const MiB = 1024 * 1024;
/** The memory targets. */
const SERVICE_RSS_LIMIT = 300 * 1000 * 1000;
const WORKER_RSS_LIMIT = 1000 * 1000 * 1000;
const SAMPLE_MS = 1000;

function resolutionArg(): [number, number] {
  const i = process.argv.indexOf('--resolution');
  const value = i >= 0 ? process.argv[i + 1] : '1920x1080';
  if (!['1920x1080', '1280x720', '640x480'].includes(value)) throw new Error('--resolution: expected 1920x1080, 1280x720 or 640x480');
  return value.split('x').map(Number) as [number, number];
}

function minutesArg(): number {
  const i = process.argv.indexOf('--minutes');
  const minutes = i >= 0 ? Number(process.argv[i + 1]) : 10;
  if (!(minutes > 0 && minutes <= 120)) throw new Error('--minutes: expected a number of minutes from 0 to 120');
  return minutes;
}

function countFrames(file: string): number {
  const out = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file]);
  return Number(String(out).trim());
}

/**
 * One H.264 segment of WIDTH x HEIGHT at 25 fps from a single encoder (x264 veryfast, CRF 23, a keyframe every
 * 2 s like a camera's), so that copies of it can be joined without re-encoding.
 */
function segment(): { file: string; source: string } {
  const bench = fs.existsSync(BENCH_SET)
    ? fs.readdirSync(BENCH_SET).filter((n) => n.endsWith(`-${WIDTH}x${HEIGHT}.mp4`)).sort()
    : [];
  const file = path.join(CACHE, bench.length ? `segment-facelog-bench-${HEIGHT}p.mp4` : `segment-vtest-${HEIGHT}p.mp4`);
  const source = bench.length
    ? `${bench.length} face-log bench videos at ${HEIGHT}p (${path.relative(process.cwd(), BENCH_SET)}), joined`
    : `vtest.avi scaled to ${WIDTH}x${HEIGHT} at 25 fps (no faces: the face-log bench set was not generated)`;
  if (fs.existsSync(file)) return { file, source };
  fs.mkdirSync(CACHE, { recursive: true });
  console.error(`generating ${path.relative(process.cwd(), file)} from ${source} ...`);
  if (bench.length) {
    joinVideos(bench.map((n) => path.join(BENCH_SET, n)), file, FPS);
  } else {
    ffmpeg(['-i', VTEST_AVI, '-vf', `scale=${WIDTH}:${HEIGHT},fps=${FPS}`, ...segmentEncoding(FPS), `${file}.tmp.mp4`]);
    fs.renameSync(`${file}.tmp.mp4`, file);
  }
  return { file, source };
}

/** The segment looped by stream copy to `frames` frames. */
function longVideo(frames: number): { file: string; source: string } {
  const seg = segment();
  const segFrames = countFrames(seg.file);
  const file = path.join(CACHE, `${path.basename(seg.file, '.mp4').replace('segment-', 'long-')}-${frames}f.mp4`);
  if (!fs.existsSync(file)) {
    const copies = Math.ceil(frames / segFrames);
    console.error(`generating ${path.relative(process.cwd(), file)} (${copies} copies of the segment) ...`);
    loopVideo(seg.file, copies, file, frames);
  }
  return { file, source: `${seg.source}, looped` };
}

const mib = (bytes: number) => (bytes / MiB).toFixed(0);
/** `, 2.31x the decode ...`; nothing without the baselines (--no-baselines). */
const ratio = (ms: number, baselineMs: number, what: string) => (Number.isNaN(baselineMs) ? '' : `, ${(ms / baselineMs).toFixed(2)}x ${what}`);

/** CPU ms of the service's workers by pid: their own, and their exited ffmpeg children's. */
function workersCpu(service: number): Map<number, { own: number; children: number }> {
  return new Map(procChildren(service).filter((pid) => kindOf(pid) === 'worker').map((pid) => [pid, procCpuMs(pid)]));
}

async function main(): Promise<void> {
  const minutes = minutesArg();
  const frames = Math.round(minutes * 60 * FPS);
  const video = longVideo(frames);
  const size = fs.statSync(video.file).size;
  console.log(`\nLong video: ${WIDTH}x${HEIGHT} @ ${FPS} fps, ${minutes} min (${frames} frames, ${mib(size)} MiB H.264), ${video.source}`);

  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s, ${((frames / ms) * 1000).toFixed(1)} fps`;
  const plain = process.argv.includes('--no-baselines') ? { pipeMs: NaN, devNullMs: NaN, transcodeMs: NaN } : await decodeBaseline(video.file, { width: WIDTH, height: HEIGHT, fps: FPS });
  if (!Number.isNaN(plain.pipeMs)) {
    console.log(`Decode (ffmpeg -threads 2 to BGR frames): into a pipe that drops them ${s(plain.pipeMs)}; to /dev/null ${s(plain.devNullMs)}; the face log's decoder into its encoder ${s(plain.transcodeMs)}`);
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-long-'));
  const service = await spawnService({ DATA_DIR: path.join(dir, 'data'), AUTH_CREDENTIALS: 'bench:bench' });
  stopServiceOnSignals(service, dir);
  const memory = new TreeMemory(service.child.pid!);
  let failed = false;
  try {
    const form = new FormData();
    form.append('video', await fs.openAsBlob(video.file, { type: 'video/mp4' }), path.basename(video.file));
    const cpuBefore = workersCpu(service.child.pid!);
    const uploadStart = performance.now();
    const res = await fetch(`${service.url}/face_log`, { method: 'POST', headers: { authorization: AUTH }, body: form });
    const posted = (await res.json()) as { task?: { job_id: string }; error?: unknown };
    if (res.status !== 200 || !posted.task) throw new Error(`POST /face_log answered ${res.status}: ${JSON.stringify(posted)}`);
    const accepted = performance.now();
    const id = posted.task.job_id;

    let task: Record<string, any>;
    let lastNote = 0;
    for (;;) {
      task = ((await (await fetch(`${service.url}/face_log/${id}`, { headers: { authorization: AUTH } })).json()) as { task: Record<string, any> }).task;
      if (task.complete) break;
      if (performance.now() - lastNote > 60_000) {
        lastNote = performance.now();
        const worker = memory.workerSeries.at(-1) ?? 0;
        console.error(`  ${((performance.now() - accepted) / 1000).toFixed(0)} s: ${task.message}; worker ${mib(worker)} MiB`);
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
    const jobMs = performance.now() - accepted;
    // Read before the pool could recycle a worker: a worker started during the job counts whole.
    const cpu = { own: 0, children: 0 };
    for (const [pid, after] of workersCpu(service.child.pid!)) {
      const before = cpuBefore.get(pid) ?? { own: 0, children: 0 };
      cpu.own += after.own - before.own;
      cpu.children += after.children - before.children;
    }
    memory.stop();

    if (!task.success) {
      failed = true;
      console.log(`FAIL: the face log failed: ${JSON.stringify(task.error)} ${task.message}`);
    } else if (task.frames_processed !== frames) {
      failed = true;
      console.log(`FAIL: the face log processed ${task.frames_processed} of the video's ${frames} frames: ${task.message}`);
    } else {
      const fps = (task.frames_processed / jobMs) * 1000;
      console.log(`Upload and checks: ${((accepted - uploadStart) / 1000).toFixed(1)} s`);
      console.log(
        `Face log: ${(jobMs / 1000).toFixed(1)} s for ${task.frames_processed} frames: ${fps.toFixed(2)} fps, ` +
          `${(fps / FPS).toFixed(2)}x real time${ratio(jobMs, plain.pipeMs, 'the decode into a pipe')}${ratio(jobMs, plain.devNullMs, 'the decode to /dev/null')}${ratio(jobMs, plain.transcodeMs, 'the decode and encode alone')}; ${task.message}`,
      );
      // However the work were scheduled, its CPU spread over every core takes this long at least.
      const cores = os.availableParallelism();
      const leastMs = (cpu.own + cpu.children) / cores;
      console.log(
        `Face log CPU: worker ${(cpu.own / 1000).toFixed(1)} s (analysis and frame moving), its ffmpeg decoder and encoder ${(cpu.children / 1000).toFixed(1)} s; ` +
          `spread over ${cores} cores at least ${(leastMs / 1000).toFixed(1)} s${ratio(leastMs, plain.pipeMs, 'the decode into a pipe')}`,
      );
    }
    console.log(`\nPeak resident memory (VmHWM and VmRSS from /proc every ${SAMPLE_MS / 1000} s), service on its defaults (WORKERS=${os.availableParallelism()}):`);
    console.log('| process | processes seen | peak RSS MiB | target |');
    console.log('|---|---|---|---|');
    const service_ = memory.peakOf('service');
    const worker = memory.peakOf('worker');
    const verdict = (peak: number, limit: number) => `< ${limit / 1e6} MB: ${peak < limit ? 'met' : 'MISSED'} (${(peak / 1e6).toFixed(0)} MB)`;
    console.log(`| service (HTTP, job store, queue) | ${service_.count} | ${mib(service_.peak)} | ${verdict(service_.peak, SERVICE_RSS_LIMIT)} |`);
    console.log(`| worker (face log, OpenCV), largest | ${worker.count} | ${mib(worker.peak)} | ${verdict(worker.peak, WORKER_RSS_LIMIT)} each |`);
    for (const kind of ['ffmpeg decoder', 'ffmpeg encoder', 'ffprobe (upload checks)', 'other'] as const) {
      const p = memory.peakOf(kind);
      if (p.count) console.log(`| ${kind}, largest | ${p.count} | ${mib(p.peak)} | |`);
    }
    // The course of the largest worker's RSS over the job, in tenths: flat means bounded.
    const series = memory.workerSeries;
    const tenths = maxPerTenth(series);
    console.log(`\nLargest worker RSS per tenth of the run (MiB): ${tenths.map(mib).join(' ')}`);
    console.log(flatnessLine(tenths, worker.peak));
    if (service_.peak >= SERVICE_RSS_LIMIT || worker.peak >= WORKER_RSS_LIMIT) failed = true;
  } finally {
    memory.stop();
    service.child.kill('SIGTERM');
    await service.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
