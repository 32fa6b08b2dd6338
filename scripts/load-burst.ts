// The load bench's run, shared by bench-load.ts (one deployment) and bench-cluster-load.ts (one
// box against three nodes): a burst of submissions on many connections (autocannon) while other
// connections poll with GETs, against a deployment's nodes (bench-deployment.ts; connections are
// dealt to the nodes in turn). Counts accepted / rejected (503) / completed per analytic
// (accepted must equal completed: nothing lost), reads every job's row to check that each ran
// exactly once, and measures GET latency on the idle deployment, during the burst and while the
// queue drains, and the peak RSS of the nodes and their worker processes (Linux /proc). The
// pollers run in a process of their own (bench-load-poller.ts).
//
// The burst mixes tamper checks (20 frames of 320x240) and face logs (1 s of a 640x480 face-log
// test video with one face) in the proportion of their `weight`s: 3 to 1 by default, so the face
// logs (1-2 s of worker time each against 0.3 s) keep the whole run to about 1-2 minutes.
// Another analytic joins the burst by adding a Submission to submissions().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import type { PollerOrder } from './bench-load-poller.js';
import type { Deployment } from './bench-deployment.js';
import { MEDIA_DIR, testMedia } from '../testkit/media.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readFacelogManifest } from '../testkit/facelog-fixtures/truth.js';
import { multipartBody, multipartType, type Part } from '../testkit/hostile-corpus/multipart.js';
import { procChildren, procCmdline, procStatus } from '../lib/proc-stats.js';

export const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
/** Below the nodes, above their workers (worker-pool.ts: +10). */
const CLIENT_NICENESS = 5;
/** How long the pollers run on the idle deployment for the baseline. */
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

export interface LoadOptions {
  /** POST connections, dealt to the nodes in turn. @defaultValue 200 */
  connections: number;
  /** POSTs in all. @defaultValue 400 */
  submissions: number;
  /** QUEUE_LIMIT of the deployment (reported; the caller sets it). */
  queueLimit: number;
  /** GET connections. @defaultValue 8 */
  pollers: number;
  /** GETs per second in all. @defaultValue 200 */
  pollRate: number;
  /** Face logs for every 3 tamper checks; 0 leaves face logs out. @defaultValue 1 */
  faceLogWeight: number;
}

/** Reads `--name N` options of the load burst from the command line. */
export function loadOptions(args: string[]): LoadOptions {
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
    faceLogWeight: get('face-log-weight', 1),
  };
}

/** The environment the load bench gives every node. */
export function loadEnv(o: LoadOptions): Record<string, string> {
  return {
    QUEUE_LIMIT: String(o.queueLimit),
    KAMCHECK_WAIT_MS: '0', // answer every POST at once: the burst measures admission, not analysis
  };
}

/** One analytic's part of a run. */
export interface AnalyticTally {
  analytic: string;
  /** Its share of the burst (Submission.weight). */
  weight: number;
  accepted: number;
  rejected: number;
  other: Record<string, number>;
  completed: number;
  failed: number;
  /** Accepted jobs missing from the store or answered twice. */
  lost: number;
  /** Accepted jobs that ran more than once (attempts > 1), read from the job rows. */
  runTwice: number;
  /** Done and failed jobs in the store (/metrics), less the job seeded for the pollers. */
  stored: number;
}

export interface LoadReport {
  deployment: string;
  tallies: AnalyticTally[];
  burst: Result;
  burstSeconds: number;
  /** From the start of the burst until every accepted job finished. */
  drainSeconds: number;
  phases: { name: string; result: Result }[];
  nodePeakRss: number;
  workerPeakRss: number;
  /** Accepted jobs run by each node (lease owner). */
  perNode: Map<string, number>;
}

/** Runs the burst against the deployment's nodes. */
export async function runLoad(deployment: Deployment, o: LoadOptions): Promise<LoadReport> {
  const kinds = submissions(o.faceLogWeight);
  const urls = deployment.urls;
  const memory = new MemorySampler(deployment.nodes.map((n) => n.child.pid!));
  // The submitting clients would be on other machines: here they run below the nodes' CPU
  // priority (and above their workers'), the pollers at the nodes'. Put back afterwards, so that
  // the next deployment's nodes start at the usual priority.
  const priority = os.getPriority();
  os.setPriority(Math.min(19, priority + CLIENT_NICENESS));
  try {
    const accepted = new Map<string, string[]>(kinds.map((k) => [k.analytic, []]));
    const rejected = new Map<string, number>(kinds.map((k) => [k.analytic, 0]));
    const other = new Map<string, Record<string, number>>(kinds.map((k) => [k.analytic, {}]));

    // Pollers: each analytic's history list and one of its tasks, over and over, until every job
    // finished (bench-load-poller.ts, in a process of its own).
    const pollPaths: string[] = [];
    for (const kind of kinds) {
      const seed = await submitOne(urls[0], kind);
      pollPaths.push(`/${kind.analytic === 'face_log' ? 'face_detect' : kind.analytic}`, kind.taskPath(seed));
    }
    const order = { url: urls, authorization: AUTH, connections: o.pollers, rate: o.pollRate, paths: pollPaths };
    const phases: { name: string; result: Result }[] = [];
    // The baseline: the same GETs on the idle deployment (and whatever else the machine runs).
    let poller = await startPoller(order);
    await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
    phases.push({ name: 'idle (baseline)', result: await poller.stop() });
    poller = await startPoller(order);

    const burstStart = Date.now();
    // One request template whose setupRequest picks the kind of each POST in turn (autocannon
    // cycles a list of requests per connection, and with 2 POSTs per connection a list would not
    // mix the kinds in proportion); the connection's context remembers it for the response.
    const bodies = new Map(kinds.map((k) => [k.analytic, multipartBody(k.parts)]));
    let posts = 0;
    const burst = await autocannon({
      url: urls,
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
            const analytic = context.kind as string;
            if (status === 200) accepted.get(analytic)!.push(JSON.parse(text).task.job_id as string);
            else if (status === 503) rejected.set(analytic, rejected.get(analytic)! + 1);
            else other.get(analytic)![status] = (other.get(analytic)![status] ?? 0) + 1;
          },
        },
      ],
    });
    const burstSeconds = (Date.now() - burstStart) / 1000;
    phases.push({ name: `during the burst (${burstSeconds.toFixed(1)} s)`, result: await poller.stop() });
    poller = await startPoller(order);

    // Every accepted job must finish, once.
    const done = new Map<string, { complete: number; failed: number }>();
    for (const kind of kinds) done.set(kind.analytic, await waitAll(urls, accepted.get(kind.analytic)!.map(kind.taskPath)));
    const drainSeconds = (Date.now() - burstStart) / 1000;
    phases.push({ name: `while the queue drains (${(drainSeconds - burstSeconds).toFixed(1)} s)`, result: await poller.stop() });
    memory.stop();
    const jobsInStore = await storeCounts(urls[0]);
    const rows = new Map((await deployment.jobs()).map((j) => [j.id, j]));

    const perNode = new Map<string, number>();
    const tallies = kinds.map((kind): AnalyticTally => {
      const ids = accepted.get(kind.analytic)!;
      const unique = new Set(ids).size;
      const { complete, failed } = done.get(kind.analytic)!;
      for (const id of ids) {
        const owner = rows.get(id)?.leaseOwner ?? '?';
        perNode.set(owner, (perNode.get(owner) ?? 0) + 1);
      }
      // Less the one job submitted before the burst for the pollers to read.
      const stored = (jobsInStore.get(`${kind.analytic}/done`) ?? 0) + (jobsInStore.get(`${kind.analytic}/failed`) ?? 0) - 1;
      return {
        analytic: kind.analytic,
        weight: kind.weight,
        accepted: ids.length,
        rejected: rejected.get(kind.analytic)!,
        other: other.get(kind.analytic)!,
        completed: complete,
        failed,
        lost: ids.length - complete + (ids.length - unique) + Math.abs(stored - ids.length),
        runTwice: ids.filter((id) => (rows.get(id)?.attempts ?? 0) > 1).length,
        stored,
      };
    });
    return {
      deployment: deployment.label,
      tallies,
      burst,
      burstSeconds,
      drainSeconds,
      phases,
      nodePeakRss: memory.nodePeak(),
      workerPeakRss: memory.workerPeak,
      perNode,
    };
  } finally {
    memory.stop();
    try {
      os.setPriority(priority);
    } catch {
      console.error('could not restore the CPU priority of this process (it needs privileges): later deployments start below the usual priority');
    }
  }
}

/** Prints a run's tables; true when a job was lost, run twice or failed, or a connection failed. */
export function printLoadReport(r: LoadReport, o: LoadOptions): boolean {
  const mix = r.tallies.map((t) => `${t.weight} ${t.analytic}`).join(' : ');
  console.log(`\nLoad on ${r.deployment}: ${o.submissions} submissions (${mix}) on ${o.connections} connections; ${o.pollers} connections polling at ${o.pollRate} GETs/s; QUEUE_LIMIT=${o.queueLimit}`);
  console.log('| analytic | accepted | rejected (503) | other | completed | failed | lost | run twice | in store (done+failed) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const t of r.tallies) {
    console.log(`| ${t.analytic} | ${t.accepted} | ${t.rejected} | ${JSON.stringify(t.other)} | ${t.completed} | ${t.failed} | ${t.lost} | ${t.runTwice} | ${t.stored} |`);
  }
  const nodes = [...r.perNode].sort().map(([n, c]) => `${n} ${c}`).join(', ');
  console.log(`\nBurst answered in ${r.burstSeconds.toFixed(1)} s (POST p50 ${r.burst.latency.p50} ms, p99 ${r.burst.latency.p99} ms, errors ${r.burst.errors}, timeouts ${r.burst.timeouts}); all accepted jobs finished after ${r.drainSeconds.toFixed(1)} s; jobs run per node: ${nodes}`);
  console.log('| GETs | phase | GET p50 ms | GET p99 ms | GET max ms |');
  console.log('|---|---|---|---|---|');
  for (const { name, result } of r.phases) {
    console.log(`| ${result.requests.total} | ${name} | ${result.latency.p50} | ${result.latency.p99} | ${result.latency.max} |`);
  }
  console.log(`\nPeak RSS: largest node ${(r.nodePeakRss / MiB).toFixed(0)} MiB, largest worker ${(r.workerPeakRss / MiB).toFixed(0)} MiB`);
  const lost = r.tallies.reduce((n, t) => n + t.lost + t.runTwice, 0);
  // Every accepted input is valid: a failed job is a fault of the service under load.
  const failures = r.tallies.reduce((n, t) => n + t.failed, 0);
  if (lost > 0 || r.burst.errors > 0 || failures > 0) {
    console.error(`FAIL (${r.deployment}): ${lost} jobs lost, duplicated or run twice, ${failures} failed, ${r.burst.errors} connection errors`);
    return true;
  }
  return false;
}

async function startPoller(order: PollerOrder): Promise<{ stop(): Promise<Result> }> {
  const child = fork(fileURLToPath(new URL('./bench-load-poller.js', import.meta.url)), [], { stdio: 'inherit' });
  try {
    os.setPriority(child.pid!, Math.max(-20, os.getPriority() - CLIENT_NICENESS)); // back to the nodes' priority
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
  await waitAll([url], [kind.taskPath(id)]);
  return id;
}

/** Polls every task until complete, 8 requests in flight, dealt to the nodes in turn. */
async function waitAll(urls: string[], paths: string[]): Promise<{ complete: number; failed: number }> {
  let complete = 0;
  let failed = 0;
  let next = 0;
  const deadline = Date.now() + 20 * 60_000;
  const worker = async (w: number) => {
    const url = urls[w % urls.length];
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
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  return { complete, failed };
}

/** `vaa_jobs{analytic,state}` from /metrics: what the store holds, by analytic/state. */
async function storeCounts(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: AUTH } })).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^vaa_jobs\{analytic="([^"]+)",state="([^"]+)"\} (\d+)$/gm)) counts.set(`${m[1]}/${m[2]}`, Number(m[3]));
  return counts;
}

/** Peak resident memory of the nodes (their VmHWM) and of their worker processes (sampled, and their VmHWM). */
class MemorySampler {
  workerPeak = 0;
  private readonly lastNodeHwm = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: number[]) {
    this.timer = setInterval(() => this.sample(), 200);
    this.timer.unref();
  }

  nodePeak(): number {
    return Math.max(0, ...this.pids.map((pid) => Math.max(this.lastNodeHwm.get(pid) ?? 0, procStatus(pid, 'VmHWM'))));
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }

  private sample(): void {
    for (const pid of this.pids) {
      this.lastNodeHwm.set(pid, Math.max(this.lastNodeHwm.get(pid) ?? 0, procStatus(pid, 'VmHWM')));
      for (const child of procChildren(pid)) {
        if (!procCmdline(child).includes('lib/worker.js')) continue;
        this.workerPeak = Math.max(this.workerPeak, procStatus(child, 'VmHWM'), procStatus(child, 'VmRSS'));
      }
    }
  }
}
