// `make bench`: the fleet bench. How many cameras one appliance (2 cores, WORKERS=2, SQLite) checks
// at one 720p tamper check per camera every 5 minutes, against what its cores could do if they did
// nothing but decode the clips.
//
// 1. Decode-only limit: 2 child processes (one per core, at the workers' priority and allocator
//    settings) each decode the bench's clips in a loop, in-process: open the MP4 with OpenCV's
//    VideoCapture, decode every frame to a BGR Mat (cap.read(), what the worker gets), release it.
//    Nothing else: no reference, no analysis, no HTTP. Clips per second of both together, and CPU
//    time per clip.
// 2. The service in its own process (testkit/service.ts spawnService, WORKERS=2, SQLite, defaults
//    otherwise). 1000 cameras get a reference each (PUT /cameras/<id>/reference, a 720p JPEG).
// 3. Rounds (4): the decode-only limit for 8 s, then the capacity for 12 s: closed loop, 6 clients
//    POST /kamcheck with `camera` and `video` (no image) for cameras in random order (every camera
//    once before any twice), each waiting for its result (KAMCHECK_WAIT_MS=30000); then the same
//    with the camera's reference uploaded as `image` (the old path). The machine is shared and its
//    load moves within a minute, so the ratio to the decode-only limit is taken per round (median
//    reported), and also from CPU time: decode CPU per clip over service + worker CPU per check,
//    which other people's load moves far less.
// 4. Steady rate: POSTs at fixed intervals at 90% of the median capacity, random cameras, for
//    45 s, between two decode-only measurements: checks/s completed, latency p50/p99 (POST to its
//    answer with the result), and whether the service kept up. Sustained checks/s is that rate
//    when it kept up.
// CPU time of the service process and of its workers per check comes from /proc for each phase.
// Until the service has the camera API (PUT /cameras/... answers 404), steps 3-4 run on the old
// path and the report says so.
//
// Options: --cameras N (1000) --rounds N (4) --capacity-s N (12) --steady-s N (45) --decode-s N (8)
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { quantile } from '../lib/stats.js';
import { procChildren, procCpuMs } from '../lib/proc-stats.js';
import { WORKER_MALLOC_ENV } from '../lib/jobs/worker-pool.js';
import { spawnService, type ServiceProcess } from '../testkit/service.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';
import { multipartBody, multipartType, type Part } from '../testkit/hostile-corpus/multipart.js';

const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
/** Distinct clips (and reference pictures): vtest.avi segments scaled to 1280x720. */
const CLIP_STARTS_S = [4, 12, 20, 28, 36, 44, 52, 60];
const FRAMES = 25;
const CAPACITY_CLIENTS = 6;
/** The steady rate as a share of the measured capacity: close to it, with room for the machine's noise. */
const STEADY_SHARE = 0.9;
/** One check per camera every 5 minutes. */
const CHECK_INTERVAL_S = 300;
/** Workers run at this much lower priority than the service (lib/jobs/worker-pool.ts); so does the decode loop. */
const WORKER_NICENESS = 10;

interface Clip {
  video: Buffer;
  videoPath: string;
  reference: Buffer;
}

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

function makeClips(dir: string): Clip[] {
  return CLIP_STARTS_S.map((start, i) => {
    const videoPath = path.join(dir, `clip-${i}.mp4`);
    const referencePath = path.join(dir, `reference-${i}.jpg`);
    const ff = (args: string[]) => execFileSync('ffmpeg', ['-y', '-v', 'error', ...args]);
    ff(['-ss', String(start), '-i', VTEST_AVI, '-frames:v', String(FRAMES), '-vf', 'scale=1280:720', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', videoPath]);
    // the camera's view a second before the clip: a healthy camera, whose check finds nothing
    ff(['-ss', String(start - 1), '-i', VTEST_AVI, '-frames:v', '1', '-vf', 'scale=1280:720', '-q:v', '2', referencePath]);
    return { video: fs.readFileSync(videoPath), videoPath, reference: fs.readFileSync(referencePath) };
  });
}

// ---- the decode-only limit ----

/** Child process: decodes the clips in a loop for `seconds`, then reports clips decoded and the time taken. */
async function decodeLoop(seconds: number, clips: string[]): Promise<void> {
  const cv = (await import('../lib/video/opencv.js')).default;
  const decode = (file: string) => {
    const cap = new cv.VideoCapture(file);
    for (;;) {
      const frame = cap.read();
      if (!frame || frame.empty) break;
      frame.release();
    }
    cap.release();
  };
  clips.forEach(decode); // warm-up: libraries loaded, allocator primed
  process.send!({ type: 'ready' });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const start = performance.now();
  const cpu = process.cpuUsage();
  let n = 0;
  while (performance.now() - start < seconds * 1000) decode(clips[n++ % clips.length]);
  const used = process.cpuUsage(cpu);
  process.send!({ type: 'done', clips: n, seconds: (performance.now() - start) / 1000, cpuMs: (used.user + used.system) / 1000 });
}

interface DecodeLimit {
  /** Clips per second of both processes together. */
  rate: number;
  /** CPU time per clip decoded. */
  cpuMsPerClip: number;
}

async function decodeLimit(seconds: number, clips: Clip[]): Promise<DecodeLimit> {
  const script = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = [0, 1].map(() =>
    fork(script, ['--decode-loop', String(seconds), ...clips.map((c) => c.videoPath)], { env: { ...WORKER_MALLOC_ENV, ...process.env } }),
  );
  for (const c of children) os.setPriority(c.pid!, Math.min(19, os.getPriority() + WORKER_NICENESS));
  const message = (c: ChildProcess, type: string) => new Promise<any>((resolve) => c.on('message', (m: any) => m.type === type && resolve(m)));
  await Promise.all(children.map((c) => message(c, 'ready')));
  const done = children.map((c) => message(c, 'done'));
  for (const c of children) c.send('go'); // both start together
  const results = await Promise.all(done);
  const decoded = results.reduce((sum, r) => sum + r.clips, 0);
  return { rate: results.reduce((sum, r) => sum + r.clips / r.seconds, 0), cpuMsPerClip: results.reduce((sum, r) => sum + r.cpuMs, 0) / decoded };
}

// ---- HTTP ----

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(url: string, method: string, parts: Part[]): Promise<{ status: number; body: any }> {
  const body = multipartBody(parts);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { authorization: AUTH, 'content-type': multipartType(), 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text for the error message
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const cameraId = (i: number) => `cam-${String(i).padStart(4, '0')}`;
const clipOf = (camera: number, clips: Clip[]) => clips[camera % clips.length];

type Path = 'camera' | 'upload';

/** One check of a camera; resolves with its latency and probability once the answer carries the result. */
async function check(url: string, how: Path, camera: number, clips: Clip[]): Promise<{ ms: number; probability: number }> {
  const clip = clipOf(camera, clips);
  const parts: Part[] = [{ name: 'video', filename: 'clip.mp4', type: 'video/mp4', data: clip.video }];
  if (how === 'camera') parts.push({ name: 'camera', data: cameraId(camera) });
  else parts.push({ name: 'image', filename: 'reference.jpg', type: 'image/jpeg', data: clip.reference });
  const start = performance.now();
  const res = await request(`${url}/kamcheck`, 'POST', parts);
  const ms = performance.now() - start;
  const task = res.body?.task;
  if (res.status !== 200 || !task?.complete || task.success === false) {
    throw new Error(`check of ${cameraId(camera)} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  return { ms, probability: task.probability };
}

// ---- CPU accounting ----

function serviceCpu(service: ServiceProcess): { main: number; workers: number } {
  const pid = service.child.pid!;
  return { main: procCpuMs(pid).own, workers: procChildren(pid).reduce((sum, p) => sum + procCpuMs(p).own, 0) };
}

interface PhaseResult {
  checks: number;
  seconds: number;
  latencies: number[];
  zeroShare: number;
  cpuMainPerCheck: number;
  cpuWorkersPerCheck: number;
}

async function measured(service: ServiceProcess, run: () => Promise<{ ms: number; probability: number }[]>): Promise<PhaseResult> {
  const cpu0 = serviceCpu(service);
  const start = performance.now();
  const results = await run();
  const seconds = (performance.now() - start) / 1000;
  const cpu1 = serviceCpu(service);
  const n = results.length;
  return {
    checks: n,
    seconds,
    latencies: results.map((r) => r.ms),
    zeroShare: results.filter((r) => r.probability === 0).length / n,
    cpuMainPerCheck: (cpu1.main - cpu0.main) / n,
    cpuWorkersPerCheck: (cpu1.workers - cpu0.workers) / n,
  };
}

function shuffledCameras(count: number): () => number {
  let order: number[] = [];
  return () => {
    if (order.length === 0) {
      order = Array.from({ length: count }, (_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
    }
    return order.pop()!;
  };
}

/** Closed loop: `clients` checks in flight at all times for `seconds`. */
function capacity(url: string, how: Path, clips: Clip[], cameras: number, seconds: number): Promise<{ ms: number; probability: number }[]> {
  const next = shuffledCameras(cameras);
  const end = performance.now() + seconds * 1000;
  const results: { ms: number; probability: number }[] = [];
  const client = async () => {
    while (performance.now() < end) results.push(await check(url, how, next(), clips));
  };
  return Promise.all(Array.from({ length: CAPACITY_CLIENTS }, client)).then(() => results);
}

/** Open loop: one check every 1/rate s for `seconds`, whatever the answers; resolves when all are answered. */
async function steady(url: string, how: Path, clips: Clip[], cameras: number, rate: number, seconds: number) {
  const next = shuffledCameras(cameras);
  const start = performance.now();
  const pending: Promise<{ ms: number; probability: number }>[] = [];
  for (let i = 0; i < Math.floor(rate * seconds); i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(check(url, how, next(), clips));
  }
  const offeredSeconds = (performance.now() - start) / 1000;
  const results = await Promise.all(pending);
  return { results, offeredSeconds, drainedSeconds: (performance.now() - start) / 1000 };
}

async function registerCameras(url: string, clips: Clip[], cameras: number): Promise<boolean> {
  const put = async (i: number) => {
    const res = await request(`${url}/cameras/${cameraId(i)}/reference`, 'PUT', [
      { name: 'image', filename: 'reference.jpg', type: 'image/jpeg', data: clipOf(i, clips).reference },
    ]);
    if (res.status === 404 && i === 0) return false;
    if (res.status !== 200) throw new Error(`PUT reference of ${cameraId(i)} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    return true;
  };
  if (!(await put(0))) return false;
  let next = 1;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < cameras) await put(next++);
    }),
  );
  return true;
}

const f1 = (x: number) => x.toFixed(1);
const f0 = (x: number) => x.toFixed(0);

const median = (xs: number[]) => quantile(xs, 0.5);

async function main(): Promise<void> {
  const cameras = arg('cameras', 1000);
  const rounds = arg('rounds', 4);
  const capacityS = arg('capacity-s', 12);
  const steadyS = arg('steady-s', 45);
  const decodeS = arg('decode-s', 8);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fleet-'));
  const clips = makeClips(dir);
  console.log(`Fleet bench: ${cameras} cameras, ${clips.length} distinct 1280x720 ${FRAMES}-frame clips, WORKERS=2, load average ${os.loadavg().map(f1).join(' ')}`);

  const service = await spawnService({ DATA_DIR: path.join(dir, 'data'), AUTH_CREDENTIALS: 'bench:bench', WORKERS: '2', KAMCHECK_WAIT_MS: '30000' });
  try {
    const t = performance.now();
    const hasCameras = await registerCameras(service.url, clips, cameras);
    const primary: Path = hasCameras ? 'camera' : 'upload';
    if (hasCameras) console.log(`registered ${cameras} cameras in ${f1((performance.now() - t) / 1000)} s`);
    else console.log('the service has no camera API (PUT /cameras/<id>/reference answered 404): checks upload the reference (old path)');
    const label = primary === 'camera' ? 'camera, no image' : 'uploaded image';

    // warm-up: both workers have loaded OpenCV and run a few checks
    await Promise.all(Array.from({ length: 4 }, (_, i) => check(service.url, primary, i, clips)));

    // The machine is shared: its load moves within a minute. Each round measures the decode-only
    // limit right before the service's capacity on both paths, and the ratios are taken per round.
    const perRound: { limit: DecodeLimit; cap: PhaseResult; old: PhaseResult }[] = [];
    for (let r = 0; r < rounds; r++) {
      const limit = await decodeLimit(decodeS, clips);
      const cap = await measured(service, () => capacity(service.url, primary, clips, cameras, capacityS));
      const old = await measured(service, () => capacity(service.url, 'upload', clips, cameras, capacityS));
      perRound.push({ limit, cap, old });
      console.log(
        `round ${r + 1}: decode-only ${f1(limit.rate)} clips/s (${f0(limit.cpuMsPerClip)} ms CPU a clip); ${label} ${f1(cap.checks / cap.seconds)} checks/s; uploaded image ${f1(old.checks / old.seconds)} checks/s; load ${f1(os.loadavg()[0])}`,
      );
    }
    const capRate = median(perRound.map((r) => r.cap.checks / r.cap.seconds));

    const rate = capRate * STEADY_SHARE;
    const limitBefore = await decodeLimit(decodeS, clips);
    let steadyRun: Awaited<ReturnType<typeof steady>> | null = null;
    const st = await measured(service, async () => {
      steadyRun = await steady(service.url, primary, clips, cameras, rate, steadyS);
      return steadyRun.results;
    });
    const limitAfter = await decodeLimit(decodeS, clips);
    const { offeredSeconds, drainedSeconds } = steadyRun!;
    // kept up: the last check was answered within 2 s of the last POST (no backlog built up)
    const keptUp = drainedSeconds - offeredSeconds < 2;
    const steadyRate = st.checks / drainedSeconds;
    const steadyLimit = (limitBefore.rate + limitAfter.rate) / 2;

    const decodeCpu = median([...perRound.map((r) => r.limit.cpuMsPerClip), limitBefore.cpuMsPerClip, limitAfter.cpuMsPerClip]);
    const cpuRatio = (r: PhaseResult) => decodeCpu / (r.cpuMainPerCheck + r.cpuWorkersPerCheck);
    const merge = (phases: PhaseResult[]): PhaseResult => {
      const checks = phases.reduce((s, p) => s + p.checks, 0);
      const weighted = (f: (p: PhaseResult) => number) => phases.reduce((s, p) => s + f(p) * p.checks, 0) / checks;
      return {
        checks,
        seconds: phases.reduce((s, p) => s + p.seconds, 0),
        latencies: phases.flatMap((p) => p.latencies),
        zeroShare: weighted((p) => p.zeroShare),
        cpuMainPerCheck: weighted((p) => p.cpuMainPerCheck),
        cpuWorkersPerCheck: weighted((p) => p.cpuWorkersPerCheck),
      };
    };
    const ratios = (pick: (r: (typeof perRound)[number]) => PhaseResult) => perRound.map((r) => { const p = pick(r); return p.checks / p.seconds / r.limit.rate; });
    const row = (name: string, r: PhaseResult, checksPerS: number, ratio: number, ratioNote: string, note: string) =>
      `| ${name} | ${f1(checksPerS)} | ${ratio.toFixed(2)} ${ratioNote} | ${cpuRatio(r).toFixed(2)} | ${f0(quantile(r.latencies, 0.5))} / ${f0(quantile(r.latencies, 0.99))} | ${f0(checksPerS * CHECK_INTERVAL_S)} | ${f0(r.cpuMainPerCheck)} + ${f0(r.cpuWorkersPerCheck)} | ${f0(r.zeroShare * 100)}% | ${note} |`;
    const capRatios = ratios((r) => r.cap);
    const oldRatios = ratios((r) => r.old);
    const oldRate = median(perRound.map((r) => r.old.checks / r.old.seconds));
    console.log(
      [
        `\nDecode-only limit (2 processes at the workers' priority, each opening the clips with OpenCV's VideoCapture and decoding every frame to BGR, in a loop): ${perRound.map((r) => f1(r.limit.rate)).join(', ')} clips/s in the rounds, ${f1(limitBefore.rate)} / ${f1(limitAfter.rate)} around the steady run; ${f0(decodeCpu)} ms of CPU a clip`,
        '| checks | checks/s | / decode-only limit (wall) | / decode-only limit (CPU) | latency p50 / p99 ms | cameras at 1 check / 5 min | CPU ms a check: service + workers | probability 0 | |',
        '|---|---|---|---|---|---|---|---|---|',
        row(`${label}, capacity`, merge(perRound.map((r) => r.cap)), capRate, median(capRatios), `(rounds ${capRatios.map((x) => x.toFixed(2)).join(', ')})`, `closed loop, ${CAPACITY_CLIENTS} clients, median of ${rounds} rounds of ${capacityS} s`),
        row(`${label}, steady`, st, steadyRate, steadyRate / steadyLimit, '', `${f1(rate)}/s offered for ${steadyS} s; ${keptUp ? 'kept up' : `did NOT keep up (drained ${f1(drainedSeconds - offeredSeconds)} s late)`}`),
        row('uploaded image (old path), capacity', merge(perRound.map((r) => r.old)), oldRate, median(oldRatios), `(rounds ${oldRatios.map((x) => x.toFixed(2)).join(', ')})`, `closed loop, ${CAPACITY_CLIENTS} clients, same rounds`),
      ].join('\n'),
    );
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    agent.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--decode-loop') {
  void decodeLoop(Number(process.argv[3]), process.argv.slice(4)).then(() => process.exit(0));
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
