// `make bench`: cameras the appliance checks itself. One box (2 cores, WORKERS=2, SQLite) checks
// cameras served by one real RTSP server (testkit/rtsp-server.ts; 720p H.264 from vtest.avi, a
// key frame a second, on several mounts) every INTERVAL_S, and is compared with what its cores
// could do if they did nothing but read and decode the same streams.
//
// 1. Decode-only limit: CONCURRENT_READS loops, each reading 25 frames of a mount with ffmpeg
//    (RTSP over TCP) and decoding them to BGR into a pipe that drops them, at the workers'
//    priority, for --decode-s: captures per second of all together, and the CPU time of those
//    ffmpeg processes per capture (this process's waited-for children, /proc/self/stat). A live
//    stream gives 25 frames in a second and the test server answers many readers slowly, so the
//    wall-clock rate is bounded by the server, not by the cores: the limit that counts is the
//    CPU one, 2 cores / CPU per capture.
// 2. Capacity: the service in its own process gets --cameras cameras (PUT /cameras/<id> with a
//    source and check_interval_s INTERVAL_S), more than it checks; after one interval of warm-up,
//    checks finished per second over --capacity-s (the `vaa_jobs` counter of done tamper checks),
//    and the CPU per check of the service (its own, and its exited ffmpeg children's) and of its
//    workers. The share: decode-only CPU per capture over the service's CPU per check (target:
//    >= 0.6, as uploaded checks in bench-fleet); and the checks/s the cores allow at that cost.
// 3. Steady: the cameras are cut to 90% of the capacity (disabled ones stop); once the checks the
//    overload left queued have drained, and one interval more, for --steady-s: checks per second, skipped checks, and from each camera's checks
//    the lateness (the capture's start minus the due time; target p99 below one interval) and the
//    wait (from the capture's start to the analysis' start on a worker), and the CPU per check.
//    Then the decode-only limit again.
// Cameras one box keeps at one check per 5 minutes: the steady rate x 300 s, and at the CPU
// limit: 2 cores / CPU per check x 300 s.
//
// Options: --cameras N (200) --mounts N (16) --decode-s N (20) --capacity-s N (40) --steady-s N (60)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { quantile } from '../lib/stats.js';
import { procChildren, procCmdline, procCpuMs } from '../lib/proc-stats.js';
import { spawnService, type ServiceProcess } from '../testkit/service.js';
import { startRtspServer, type RtspServer } from '../testkit/rtsp-server.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';

const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
const INTERVAL_S = 10;
const STEADY_SHARE = 0.9;
const CONCURRENT_READS = 24;
/** Workers run at this much lower priority than the service (lib/jobs/worker-pool.ts); so do the decode loops. */
const WORKER_NICENESS = 10;

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service's CPU: its process with its exited children (the captures' ffmpeg), and its worker processes. */
function serviceCpu(service: ServiceProcess): { main: number; workers: number } {
  const pid = service.child.pid!;
  const workers = procChildren(pid).filter((p) => procCmdline(p).includes('worker'));
  const main = procCpuMs(pid);
  return { main: main.own + main.children, workers: workers.reduce((sum, p) => sum + procCpuMs(p).own, 0) };
}

/** 30 s of vtest.avi at 1280x720, H.264 with a key frame every second (a common camera setting). */
function makeStream(dir: string): string {
  const file = path.join(dir, 'camera-720p.mpegts');
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-i', VTEST_AVI, '-t', '30', '-vf', 'scale=1280:720', '-r', '25', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '25', '-bf', '0', '-pix_fmt', 'yuv420p', '-f', 'mpegts', file]);
  return file;
}

// ---- the decode-only limit ----

function readOnce(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('ffmpeg', ['-nostdin', '-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-map', '0:v:0', '-frames:v', '25', '-f', 'rawvideo', '-pix_fmt', 'bgr24', 'pipe:1'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      os.setPriority(child.pid!, Math.min(19, os.getPriority() + WORKER_NICENESS));
    } catch {
      // gone already
    }
    child.stdout.resume();
    child.on('close', (code) => resolve(code === 0));
  });
}

async function decodeLimit(urls: string[], seconds: number): Promise<{ rate: number; failed: number; cpuMsPerCapture: number }> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const start = performance.now();
  const cpu0 = procCpuMs('self').children;
  await Promise.all(
    Array.from({ length: CONCURRENT_READS }, async (_, i) => {
      for (let n = i; performance.now() < end; n += CONCURRENT_READS) {
        if (await readOnce(urls[n % urls.length])) done++;
        else failed++;
      }
    }),
  );
  const children = procCpuMs('self').children - cpu0;
  return { rate: done / ((performance.now() - start) / 1000), failed, cpuMsPerCapture: children / Math.max(1, done + failed) };
}

// ---- the service ----

async function call(url: string, method = 'GET', body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { authorization: AUTH, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const type = res.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? await res.json() : await res.text();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** A counter or gauge of /metrics (the sum of the lines that match). */
async function metric(base: string, pattern: RegExp): Promise<number> {
  const text: string = await call(`${base}/metrics`);
  let sum = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

const doneChecks = (base: string) => metric(base, /^vaa_jobs\{analytic="kamcheck",state="done"\}/);
const skipped = (base: string) => metric(base, /^vaa_camera_checks_skipped_total/);

async function setCameras(base: string, rtsp: RtspServer, mounts: number, count: number, enabled: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await call(`${base}/cameras/cam-${String(i).padStart(4, '0')}`, 'PUT', {
      source_url: rtsp.url(`cam${i % mounts}`),
      check_interval_s: INTERVAL_S,
      enabled: i < enabled,
    });
  }
}

/** Lateness and wait of the checks of every camera that finished after `since`, seconds. */
async function lateness(base: string, count: number, since: number): Promise<{ late: number[]; wait: number[] }> {
  const late: number[] = [];
  const wait: number[] = [];
  for (let i = 0; i < count; i++) {
    const cam = (await call(`${base}/cameras/cam-${String(i).padStart(4, '0')}`)).camera;
    for (const c of cam.checks) {
      if (Date.parse(c.finish_time) < since) continue;
      if (typeof c.lateness_s === 'number') late.push(c.lateness_s);
      if (typeof c.wait_s === 'number') wait.push(c.wait_s);
    }
  }
  return { late, wait };
}

const cores = os.cpus().length;

async function main(): Promise<void> {
  const cameras = arg('cameras', 200);
  const mounts = arg('mounts', 16);
  const decodeS = arg('decode-s', 20);
  const capacityS = arg('capacity-s', 40);
  const steadyS = arg('steady-s', 60);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sources-'));
  const dataDir = path.join(dir, 'data');
  const file = makeStream(dir);
  const rtsp = await startRtspServer({ mounts: Object.fromEntries(Array.from({ length: mounts }, (_, i) => [`cam${i}`, file])) });
  let service: ServiceProcess | null = null;
  try {
    const urls = Array.from({ length: mounts }, (_, i) => rtsp.url(`cam${i}`));
    console.log(`bench-camera-sources: ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${mounts} mounts of 1280x720 H.264 (key frame each second), checks every ${INTERVAL_S} s`);
    const before = await decodeLimit(urls, decodeS);
    console.log(
      `decode-only: ${before.rate.toFixed(1)} captures/s by wall clock (${CONCURRENT_READS} at a time, ${before.failed} failed); ` +
        `${before.cpuMsPerCapture.toFixed(0)} ms of CPU a capture: limit ${((cores * 1000) / before.cpuMsPerCapture).toFixed(1)} captures/s at full CPU`,
    );

    service = await spawnService({ DATA_DIR: dataDir, AUTH_CREDENTIALS: 'bench:bench', WORKERS: '2', LOG_LEVEL: 'warn', KAMCHECK_WAIT_MS: '0' });
    const base = service.url;
    await setCameras(base, rtsp, mounts, cameras, cameras);
    await sleep(INTERVAL_S * 1000); // the first captures learn references, and the first burst settles
    const d0 = await doneChecks(base);
    const c0 = serviceCpu(service);
    const server0 = rtsp.pid ? procCpuMs(rtsp.pid).own : 0;
    const t0 = performance.now();
    await sleep(capacityS * 1000);
    const checks = (await doneChecks(base)) - d0;
    const capacity = checks / ((performance.now() - t0) / 1000);
    const c1 = serviceCpu(service);
    const perCheck = { main: (c1.main - c0.main) / checks, workers: (c1.workers - c0.workers) / checks };
    const cpuPerCheck = perCheck.main + perCheck.workers;
    const serverShare = ((rtsp.pid ? procCpuMs(rtsp.pid).own : 0) - server0) / (performance.now() - t0);
    console.log(
      `capacity: ${capacity.toFixed(2)} checks/s with ${cameras} cameras offered ${(cameras / INTERVAL_S).toFixed(1)}/s; ` +
        `CPU a check ${perCheck.main.toFixed(0)} (service and its captures) + ${perCheck.workers.toFixed(0)} (workers) ms: ` +
        `share of the decode-only limit by CPU ${(before.cpuMsPerCapture / cpuPerCheck).toFixed(2)}, ${((cores * 1000) / cpuPerCheck).toFixed(1)} checks/s at full CPU; ` +
        `the RTSP server used ${(serverShare * 100).toFixed(0)}% of a core`,
    );

    const steadyCameras = Math.max(1, Math.floor(STEADY_SHARE * capacity * INTERVAL_S));
    await setCameras(base, rtsp, mounts, cameras, steadyCameras);
    // The checks the overload left queued drain first (one per camera at most), then one interval.
    const drainStart = performance.now();
    while ((await metric(base, /^vaa_queue_depth/)) > 0 && performance.now() - drainStart < 300_000) await sleep(1000);
    await sleep(INTERVAL_S * 1000);
    const since = Date.now();
    const d1 = await doneChecks(base);
    const s1 = await skipped(base);
    const c2 = serviceCpu(service);
    const t1 = performance.now();
    await sleep(steadyS * 1000);
    const steadyChecks = (await doneChecks(base)) - d1;
    const rate = steadyChecks / ((performance.now() - t1) / 1000);
    const c3 = serviceCpu(service);
    const steadyCpu = { main: (c3.main - c2.main) / steadyChecks, workers: (c3.workers - c2.workers) / steadyChecks };
    const skips = (await skipped(base)) - s1;
    const { late, wait } = await lateness(base, steadyCameras, since);
    const after = await decodeLimit(urls, decodeS);
    const decodeCpu = (before.cpuMsPerCapture + after.cpuMsPerCapture) / 2;
    console.log(
      `steady: ${steadyCameras} cameras every ${INTERVAL_S} s (${(steadyCameras / INTERVAL_S).toFixed(1)}/s offered): ${rate.toFixed(2)} checks/s, ` +
        `${skips} skipped; lateness p50 ${quantile(late, 0.5).toFixed(2)} s, p99 ${quantile(late, 0.99).toFixed(2)} s; ` +
        `wait (capture, then a worker) p50 ${quantile(wait, 0.5).toFixed(2)} s, p99 ${quantile(wait, 0.99).toFixed(2)} s (${late.length} checks); ` +
        `CPU a check ${steadyCpu.main.toFixed(0)} + ${steadyCpu.workers.toFixed(0)} ms; ` +
        `decode-only after: ${after.rate.toFixed(1)} captures/s, ${after.cpuMsPerCapture.toFixed(0)} ms of CPU a capture`,
    );
    console.log(
      `summary: share ${(decodeCpu / cpuPerCheck).toFixed(2)} of the decode-only limit by CPU (${decodeCpu.toFixed(0)} against ${cpuPerCheck.toFixed(0)} ms a check); ` +
        `p99 lateness ${quantile(late, 0.99).toFixed(2)} s of a ${INTERVAL_S} s interval at ${Math.round((100 * steadyCameras) / INTERVAL_S / capacity)}% of capacity; ` +
        `cameras at one check / 5 min: ${Math.round(rate * 300)} kept here, ${Math.round(((cores * 1000) / cpuPerCheck) * 300)} at full CPU`,
    );
  } finally {
    if (service) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await rtsp.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
