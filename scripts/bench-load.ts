// `make bench`: a burst of submissions on 200 connections (autocannon) while other connections
// poll with GETs, against the service in its own process (WORKERS=2, as deployed on 2 cores).
// Reports accepted / rejected (503) / completed per analytic (accepted must equal completed:
// nothing lost), GET latency p50/p99 under the load, and the peak RSS of the service and of its
// worker processes (Linux /proc). Exits 1 when a job was lost, duplicated or failed. The pollers
// run in a process of their own (bench-load-poller.ts).
//
// The burst mixes tamper checks (20 frames of 320x240) and face logs (1 s of a 640x480 face-log
// test video with one face) in the proportion of their `weight`s: 3 to 1 by default, so the face
// logs (1-2 s of worker time each against 0.3 s) keep the whole run to about 1-2 minutes.
//
// Options: --connections N (200) --submissions N (400 POSTs in all) --queue-limit N (150)
//          --pollers N (8 GET connections) --poll-rate N (200 GETs/s in all) --workers N (2)
//          --face-log-weight N (1 face log for every 3 tamper checks; 0 leaves face logs out)
// Another analytic joins the burst by adding a Submission to submissions().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import type { PollerOrder } from './bench-load-poller.js';
import { spawnService } from '../testkit/service.js';
import { MEDIA_DIR, testMedia } from '../testkit/media.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readFacelogManifest } from '../testkit/facelog-fixtures/truth.js';
import { multipartBody, multipartType, type Part } from '../testkit/hostile-corpus/multipart.js';
import { procChildren, procCmdline, procStatus } from '../lib/proc-stats.js';

const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
/** Below the service, above its workers (worker-pool.ts: +10). */
const CLIENT_NICENESS = 5;
/** How long the pollers run on the idle service for the baseline. */
const IDLE_POLL_MS = 3000;
const MiB = 1024 * 1024;

/** One kind of upload in the burst: built once, sent on every turn of a connection. */
interface Submission {
  analytic: string;
  /** POST path, e.g. /kamcheck. */
  path: string;
  parts: Part[];
  /** Where a job of this kind is polled. */
  taskPath: (jobId: string) => string;
  /** Share of the burst: this many of this kind in every sum-of-weights POSTs. */
  weight: number;
}

/** Tamper checks per face log in the burst. */
const KAMCHECK_WEIGHT = 3;

function submissions(faceLogWeight: number): Submission[] {
  const media = testMedia();
  const list: Submission[] = [
    {
      analytic: 'kamcheck',
      path: '/kamcheck',
      parts: [
        { name: 'video', filename: 'clip.mp4', type: 'video/mp4', data: fs.readFileSync(media.clip) },
        { name: 'image', filename: 'reference.png', type: 'image/png', data: fs.readFileSync(media.reference) },
      ],
      taskPath: (id) => `/kamcheck/${id}`,
      weight: KAMCHECK_WEIGHT,
    },
  ];
  if (faceLogWeight > 0) {
    list.push({
      analytic: 'face_log',
      path: '/face_log',
      parts: [{ name: 'video', filename: 'door.mp4', type: 'video/mp4', data: fs.readFileSync(faceLogClip()) }],
      taskPath: (id) => `/face_log/${id}`,
      weight: faceLogWeight,
    });
  }
  return list;
}

/**
 * 25 frames (1 s) of the face-log test video "single" (640x480), frames 10-34, where the face
 * grows from 36 to 66 px: a real face log (detection, tracking, a sighting, thumbnail, XML and
 * overlay video) that takes about 2 s of a worker. Cut once into the HTTP media cache.
 */
function faceLogClip(): string {
  const file = path.join(MEDIA_DIR, 'facelog-1s.mp4');
  if (fs.existsSync(file)) return file;
  const manifest = readFacelogManifest(DEFAULT_FACELOG_FIXTURE_DIR);
  const single = manifest?.videos.find((v) => v.scenario === 'single');
  if (!single) throw new Error(`no face-log test videos in ${DEFAULT_FACELOG_FIXTURE_DIR}: run \`make fixtures\``);
  execFileSync('ffmpeg', [
    '-y', '-v', 'error', '-i', path.join(DEFAULT_FACELOG_FIXTURE_DIR, single.file),
    '-vf', 'trim=start_frame=10:end_frame=35,setpts=PTS-STARTPTS',
    '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', file,
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  return file;
}

/** The kind of the i-th POST: the weights spread evenly (3:1 gives k f k k k f k k ...). */
function kindAt(kinds: Submission[], i: number): Submission {
  const total = kinds.reduce((n, k) => n + k.weight, 0);
  let slot = (i * (total - 1)) % total; // a stride coprime with the cycle mixes the kinds
  for (const kind of kinds) {
    if (slot < kind.weight) return kind;
    slot -= kind.weight;
  }
  return kinds[0];
}

interface Options {
  connections: number;
  submissions: number;
  queueLimit: number;
  pollers: number;
  pollRate: number;
  workers: number;
  faceLogWeight: number;
}

function options(): Options {
  const args = process.argv.slice(2);
  const get = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  return {
    connections: get('connections', 200),
    submissions: get('submissions', 400),
    queueLimit: get('queue-limit', 150),
    pollers: get('pollers', 8),
    pollRate: get('poll-rate', 200),
    workers: get('workers', 2),
    faceLogWeight: get('face-log-weight', 1),
  };
}

interface Tally {
  accepted: string[];
  rejected: number;
  other: Record<string, number>;
}

async function main(): Promise<void> {
  const o = options();
  const kinds = submissions(o.faceLogWeight);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-load-'));
  const service = await spawnService({
    DATA_DIR: path.join(dir, 'data'),
    AUTH_CREDENTIALS: 'bench:bench',
    WORKERS: String(o.workers),
    QUEUE_LIMIT: String(o.queueLimit),
    KAMCHECK_WAIT_MS: '0', // answer every POST at once: the burst measures admission, not analysis
    MIN_FREE_DISK_MB: '1',
  });
  const memory = new MemorySampler(service.child.pid!);
  // The submitting clients would be on other machines: here they run below the service's CPU
  // priority (and above its workers'), the pollers at the service's.
  os.setPriority(Math.min(19, os.getPriority() + CLIENT_NICENESS));
  try {
    const tallies = new Map<string, Tally>(kinds.map((k) => [k.analytic, { accepted: [], rejected: 0, other: {} }]));

    // Pollers: each analytic's history list and one of its tasks, over and over, until every job
    // finished (bench-load-poller.ts, in a process of its own).
    const pollPaths: string[] = [];
    for (const kind of kinds) {
      const seed = await submitOne(service.url, kind);
      pollPaths.push(`/${kind.analytic === 'face_log' ? 'face_detect' : kind.analytic}`, kind.taskPath(seed));
    }
    const order = { url: service.url, authorization: AUTH, connections: o.pollers, rate: o.pollRate, paths: pollPaths };
    const phases: { name: string; result: Result }[] = [];
    // The baseline: the same GETs on the idle service (and whatever else the machine runs).
    let poller = await startPoller(order);
    await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
    phases.push({ name: 'idle service (baseline)', result: await poller.stop() });
    poller = await startPoller(order);

    const burstStart = Date.now();
    // One request template whose setupRequest picks the kind of each POST in turn (autocannon
    // cycles a list of requests per connection, and with 2 POSTs per connection a list would not
    // mix the kinds in proportion); the connection's context remembers it for the response.
    const bodies = new Map(kinds.map((k) => [k.analytic, multipartBody(k.parts)]));
    let posts = 0;
    const burst = await autocannon({
      url: service.url,
      connections: o.connections,
      amount: o.submissions,
      timeout: 60,
      requests: [
        {
          method: 'POST',
          setupRequest: (req: any, context: any) => {
            const kind = kindAt(kinds, posts++);
            context.kind = kind.analytic;
            return { ...req, path: kind.path, headers: { authorization: AUTH, 'content-type': multipartType() }, body: bodies.get(kind.analytic) };
          },
          onResponse: (status: number, text: string, context: any) => {
            const tally = tallies.get(context.kind)!;
            if (status === 200) tally.accepted.push(JSON.parse(text).task.job_id as string);
            else if (status === 503) tally.rejected++;
            else tally.other[status] = (tally.other[status] ?? 0) + 1;
          },
        },
      ],
    });
    const burstSeconds = (Date.now() - burstStart) / 1000;
    phases.push({ name: `during the burst (${burstSeconds.toFixed(1)} s)`, result: await poller.stop() });
    poller = await startPoller(order);

    // Every accepted job must finish, once.
    const completed = new Map<string, number>();
    const failed = new Map<string, number>();
    for (const kind of kinds) {
      const ids = tallies.get(kind.analytic)!.accepted;
      const done = await waitAll(service.url, ids.map(kind.taskPath));
      completed.set(kind.analytic, done.complete);
      failed.set(kind.analytic, done.failed);
    }
    const drainSeconds = (Date.now() - burstStart) / 1000;
    phases.push({ name: `while the queue drains (${(drainSeconds - burstSeconds).toFixed(1)} s)`, result: await poller.stop() });
    memory.stop();
    const jobsInStore = await storeCounts(service.url);

    const mix = kinds.map((k) => `${k.weight} ${k.analytic}`).join(' : ');
    console.log(`\nLoad: ${o.submissions} submissions (${mix}) on ${o.connections} connections; ${o.pollers} connections polling at ${o.pollRate} GETs/s; WORKERS=${o.workers}, QUEUE_LIMIT=${o.queueLimit}`);
    console.log('| analytic | accepted | rejected (503) | other | completed | failed | lost | in store (done+failed) |');
    console.log('|---|---|---|---|---|---|---|---|');
    let lost = 0;
    for (const kind of kinds) {
      const t = tallies.get(kind.analytic)!;
      const unique = new Set(t.accepted).size;
      const missing = t.accepted.length - completed.get(kind.analytic)! + (t.accepted.length - unique);
      lost += missing;
      // Less the one job submitted before the burst for the pollers to read.
      const stored = (jobsInStore.get(`${kind.analytic}/done`) ?? 0) + (jobsInStore.get(`${kind.analytic}/failed`) ?? 0) - 1;
      if (stored !== t.accepted.length) lost += Math.abs(stored - t.accepted.length);
      console.log(
        `| ${kind.analytic} | ${t.accepted.length} | ${t.rejected} | ${JSON.stringify(t.other)} | ${completed.get(kind.analytic)} | ${failed.get(kind.analytic)} | ${missing} | ${stored} |`,
      );
    }
    console.log(`\nBurst answered in ${burstSeconds.toFixed(1)} s (POST p50 ${burst.latency.p50} ms, p99 ${burst.latency.p99} ms, errors ${burst.errors}, timeouts ${burst.timeouts}); all accepted jobs finished after ${drainSeconds.toFixed(1)} s`);
    console.log('| GETs | phase | GET p50 ms | GET p99 ms | GET max ms |');
    console.log('|---|---|---|---|---|');
    for (const { name, result } of phases) {
      console.log(`| ${result.requests.total} | ${name} | ${result.latency.p50} | ${result.latency.p99} | ${result.latency.max} |`);
    }
    console.log(`\nPeak RSS: service ${(memory.servicePeak() / MiB).toFixed(0)} MiB, largest worker ${(memory.workerPeak / MiB).toFixed(0)} MiB`);
    // Every accepted input is valid: a failed job is a fault of the service under load.
    const failures = [...failed.values()].reduce((a, b) => a + b, 0);
    if (lost > 0 || burst.errors > 0 || failures > 0) {
      console.error(`FAIL: ${lost} jobs lost or duplicated, ${failures} failed, ${burst.errors} connection errors`);
      process.exitCode = 1;
    }
  } finally {
    memory.stop();
    service.child.kill('SIGTERM');
    await service.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function startPoller(order: PollerOrder): Promise<{ stop(): Promise<Result> }> {
  const child = fork(fileURLToPath(new URL('./bench-load-poller.js', import.meta.url)), [], { stdio: 'inherit' });
  try {
    os.setPriority(child.pid!, Math.max(-20, os.getPriority() - CLIENT_NICENESS)); // back to the service's priority
  } catch {
    /* lowering a niceness needs privileges: then the pollers share the submitters' priority */
  }
  const result = new Promise<Result>((resolve, reject) => {
    child.on('message', (m) => {
      if (m !== 'started') resolve(m as Result);
    });
    child.once('exit', (code) => reject(new Error(`the poller ended (${code}) without a result`)));
  });
  result.catch(() => {});
  await new Promise<void>((resolve) => {
    child.once('message', () => resolve());
    child.send(order);
  });
  return {
    stop: () => {
      child.send('stop');
      return result;
    },
  };
}

/** One job of this kind before the burst (its task is what the pollers read), finished. */
async function submitOne(url: string, kind: Submission): Promise<string> {
  const res = await fetch(`${url}${kind.path}`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': multipartType() },
    body: new Uint8Array(multipartBody(kind.parts)),
  });
  const id = ((await res.json()) as { task: { job_id: string } }).task.job_id;
  await waitAll(url, [kind.taskPath(id)]);
  return id;
}

/** Polls every task until complete; 8 requests in flight. */
async function waitAll(url: string, paths: string[]): Promise<{ complete: number; failed: number }> {
  let complete = 0;
  let failed = 0;
  let next = 0;
  const deadline = Date.now() + 20 * 60_000;
  const worker = async () => {
    while (next < paths.length) {
      const p = paths[next++];
      for (;;) {
        const res = await fetch(`${url}${p}`, { headers: { authorization: AUTH } });
        const body = (await res.json()) as { task?: { complete: boolean; success?: boolean } };
        if (body.task?.complete) {
          complete++;
          if (!body.task.success) failed++;
          break;
        }
        if (Date.now() > deadline) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { complete, failed };
}

/** `vaa_jobs{analytic,state}` from /metrics: what the store holds, by analytic/state. */
async function storeCounts(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: AUTH } })).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^vaa_jobs\{analytic="([^"]+)",state="([^"]+)"\} (\d+)$/gm)) counts.set(`${m[1]}/${m[2]}`, Number(m[3]));
  return counts;
}

/** Peak resident memory of the service (its VmHWM) and of its worker processes (sampled, and their VmHWM). */
class MemorySampler {
  workerPeak = 0;
  private lastServiceHwm = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 200);
    this.timer.unref();
  }

  servicePeak(): number {
    return Math.max(this.lastServiceHwm, procStatus(this.pid, 'VmHWM'));
  }

  stop(): void {
    if (this.timer) this.sample();
    clearInterval(this.timer);
  }

  private sample(): void {
    this.lastServiceHwm = Math.max(this.lastServiceHwm, procStatus(this.pid, 'VmHWM'));
    for (const child of procChildren(this.pid)) {
      if (!procCmdline(child).includes('lib/worker.js')) continue;
      this.workerPeak = Math.max(this.workerPeak, procStatus(child, 'VmHWM'), procStatus(child, 'VmRSS'));
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
