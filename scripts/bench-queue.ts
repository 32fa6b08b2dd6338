// `make bench`: what the job queue adds, SQLite against PostgreSQL. Prints tables; asserts nothing
// but that every job ran once.
//
// 1. POST-to-start: the time from a client's POST /kamcheck (taken just before it sends) to the
//    moment a worker's claim started the job (the job row's started_at, read from the database:
//    the API does not show it). Split at the row's created_at (the accepting node, just before
//    its INSERT): before it, HTTP and upload checks (multipart parsing, ffprobe of both files,
//    moving them, the QUEUE_LIMIT count); after it, the queue itself (the INSERT's commit, the
//    wake-up of a node with a free worker: in-process for SQLite, LISTEN/NOTIFY for PostgreSQL,
//    and its claim). Idle: one POST at a time, the next once the last job finished and its node
//    had 100 ms to free the worker. Burst: every POST at once, one connection each; POST-to-start
//    then mostly measures the backlog (a worker runs one job at a time), so the burst reports
//    instead how long each job waited while it was queued and its node had a free worker: from
//    the later of its created_at and the finish of the previous job on that worker, to its
//    start. That wait is the queue's own cost per job under load: the finish's write, removing
//    the job's uploads, and the next claim; it is shown for all jobs and for those whose wait
//    began after the last POST was answered (no uploads competing for the node and the disk).
// 2. Statements per job: what the nodes sent PostgreSQL during each run (pg_stat_statements).
// 3. Claim capacity of the store without the service (bench-claims.ts).
//
// Deployments: one box on SQLite (WORKERS=2, as deployed on 2 cores), one node on PostgreSQL
// (WORKERS=2; durable settings, bench-deployment.ts), and three nodes on one PostgreSQL and one
// DATA_DIR with WORKERS=1+1+0 (two workers for two cores, as the single box; the third node is
// API-only). POSTs go to the nodes in turn. Jobs are 20-frame 320x240 tamper checks;
// KAMCHECK_WAIT_MS=0 answers each POST at once.
//
// Options: --idle N (100 sequential POSTs) --burst N (200 POSTs at once) --claim-jobs N (2000)
//          --rounds N (3) --claimers 1,4,16 --history N (200000 finished jobs; 0 skips)
//          --setups sqlite,postgres,postgres-3 (the deployments, in order; '' for none)
//          --skip-claims
import fs from 'node:fs';
import { quantile } from '../lib/stats.js';
import { testMedia } from '../testkit/media.js';
import { multipartBody, multipartType } from '../testkit/hostile-corpus/multipart.js';
import { describeSpec, startBenchPostgres, startDeployment, type Deployment, type DeploymentSpec, type JobTimes } from './bench-deployment.js';
import { readStatementStats, resetStatementStats, type StatementCount } from './bench-statements.js';
import { benchClaims } from './bench-claims.js';

const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
const SETUPS: Record<string, Pick<DeploymentSpec, 'backend' | 'workers'>> = {
  sqlite: { backend: 'sqlite', workers: [2] },
  postgres: { backend: 'postgres', workers: [2] },
  'postgres-3': { backend: 'postgres', workers: [1, 1, 0] },
};
/** KAMCHECK_WAIT_MS=0: the POST answers once the job is queued. QUEUE_LIMIT: the burst is never refused. */
const ENV = { KAMCHECK_WAIT_MS: '0', QUEUE_LIMIT: '100000' };
/** Jobs per node before measuring: the first jobs of a worker load its code and models. */
const WARM_UP_JOBS = 2;
/** After a job finished, before the next POST: its node removes the uploads, then frees the worker. */
const IDLE_GAP_MS = 100;
/** How often the bench reads a job's row while it waits for it. */
const WAIT_POLL_MS = 5;
/** The quiet window: what idle nodes send the database on their own. */
const QUIET_MS = 5000;
/** The target of the issue: POST-to-start p99 on an idle cluster. */
const TARGET_IDLE_P99_MS = 100;

interface Options {
  idle: number;
  burst: number;
  claimJobs: number;
  rounds: number;
  claimers: number[];
  history: number;
  /** Names of SETUPS to run, in order. */
  setups: string[];
  claims: boolean;
}

function options(): Options {
  const args = process.argv.slice(2);
  const get = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  return {
    idle: Number(get('idle', '100')),
    burst: Number(get('burst', '200')),
    claimJobs: Number(get('claim-jobs', '2000')),
    rounds: Number(get('rounds', '3')),
    claimers: get('claimers', '1,4,16').split(',').map(Number),
    history: Number(get('history', '200000')),
    setups: get('setups', Object.keys(SETUPS).join(',')).split(',').filter(Boolean),
    claims: !args.includes('--skip-claims'),
  };
}

/** A POST as the client saw it. */
interface Post {
  id: string;
  sentAt: number;
  answeredAt: number;
}

/** A POST and its job's row. */
interface Sample extends Post {
  job: JobTimes;
}

interface SetupResult {
  label: string;
  idle: Sample[];
  burst: Sample[];
  /** Per burst job: its wait while queued with a free worker, and whether that began after the last POST was answered. */
  freeWorkerWait: { ms: number; afterPosts: boolean }[];
  drain: { seconds: number; jobsPerS: number; utilisation: number };
  /** Statement counts (PostgreSQL only): quiet window, idle run, burst. */
  statements: { quiet: StatementCount[]; idle: StatementCount[]; burst: StatementCount[]; quietNodeSeconds: number } | null;
  perNode: Map<string, number>;
}

async function main(): Promise<void> {
  const o = options();
  const postgres = await startBenchPostgres({ statementStats: true });
  try {
    if (o.setups.length > 0) {
      const media = testMedia();
      const body = multipartBody([
        { name: 'video', filename: 'clip.mp4', type: 'video/mp4', data: fs.readFileSync(media.clip) },
        { name: 'image', filename: 'reference.png', type: 'image/png', data: fs.readFileSync(media.reference) },
      ]);
      const results: SetupResult[] = [];
      for (const name of o.setups) {
        const setup = SETUPS[name];
        if (!setup) throw new Error(`--setups: no deployment named ${name} (${Object.keys(SETUPS).join(', ')})`);
        console.error(`${describeSpec(setup)}: ${o.idle} POSTs one at a time, then ${o.burst} at once`);
        const deployment = await startDeployment({ ...setup, env: ENV, postgres: setup.backend === 'postgres' ? postgres : undefined });
        try {
          results.push(await measure(deployment, body, o));
        } finally {
          await deployment.stop();
        }
      }
      report(results, o);
    }
    if (o.claims) await benchClaims(postgres, { jobs: o.claimJobs, rounds: o.rounds, claimers: o.claimers, history: o.history });
  } finally {
    await postgres.stop();
  }
}

async function measure(d: Deployment, body: Buffer, o: Options): Promise<SetupResult> {
  const url = d.postgres?.url;
  for (let i = 0; i < WARM_UP_JOBS * d.urls.length; i++) await postAndWait(d, i, body);

  let quiet: StatementCount[] = [];
  if (url) {
    await resetStatementStats(url);
    await sleep(QUIET_MS);
    quiet = await readStatementStats(url);
  }

  if (url) await resetStatementStats(url);
  const idle: Sample[] = [];
  for (let i = 0; i < o.idle; i++) idle.push(await postAndWait(d, i, body));
  const idleStatements = url ? await readStatementStats(url) : [];

  if (url) await resetStatementStats(url);
  const posts = await Promise.all(Array.from({ length: o.burst }, (_, i) => post(d.urls[i % d.urls.length], body)));
  const rows = await waitAllFinished(d, posts.map((p) => p.id));
  const burstStatements = url ? await readStatementStats(url) : [];
  const burst = posts.map((p) => ({ ...p, job: rows.get(p.id)! }));

  const workersByNode = new Map(d.spec.workers.map((w, i) => [`node-${i + 1}`, w]));
  const perNode = new Map<string, number>();
  for (const s of burst) perNode.set(s.job.leaseOwner ?? '?', (perNode.get(s.job.leaseOwner ?? '?') ?? 0) + 1);
  const twice = [...idle, ...burst].filter((s) => s.job.attempts !== 1 || s.job.state !== 'done');
  if (twice.length > 0) throw new Error(`${twice.length} jobs not done in exactly one attempt: ${JSON.stringify(twice[0].job)}`);
  return {
    label: d.label,
    idle,
    burst,
    freeWorkerWait: freeWorkerWaits(burst.map((s) => s.job), workersByNode, Math.max(...posts.map((p) => p.answeredAt))),
    drain: drain(burst.map((s) => s.job), d.spec.workers.reduce((a, b) => a + b, 0)),
    statements: url ? { quiet, idle: idleStatements, burst: burstStatements, quietNodeSeconds: (QUIET_MS / 1000) * d.urls.length } : null,
    perNode,
  };
}

async function post(url: string, body: Buffer): Promise<Post> {
  const sentAt = Date.now();
  const res = await fetch(`${url}/kamcheck`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': multipartType() },
    body: new Uint8Array(body),
  });
  const answer = (await res.json()) as { task?: { job_id: string } };
  const answeredAt = Date.now();
  if (res.status !== 200 || !answer.task) throw new Error(`POST /kamcheck answered ${res.status}: ${JSON.stringify(answer)}`);
  return { id: answer.task.job_id, sentAt, answeredAt };
}

/** One POST to node i (in turn), then waits for its job to finish and the node to free the worker. */
async function postAndWait(d: Deployment, i: number, body: Buffer): Promise<Sample> {
  const p = await post(d.urls[i % d.urls.length], body);
  for (;;) {
    const job = await d.job(p.id);
    if (job && (job.state === 'done' || job.state === 'failed')) {
      await sleep(IDLE_GAP_MS);
      return { ...p, job };
    }
    await sleep(WAIT_POLL_MS);
  }
}

async function waitAllFinished(d: Deployment, ids: string[]): Promise<Map<string, JobTimes>> {
  const wanted = new Set(ids);
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const rows = (await d.jobs()).filter((j) => wanted.has(j.id));
    if (rows.length === ids.length && rows.every((j) => j.state === 'done' || j.state === 'failed')) return new Map(rows.map((j) => [j.id, j]));
    if (Date.now() > deadline) throw new Error('the burst did not finish in 20 minutes');
    await sleep(250);
  }
}

/**
 * For each job, how long it waited while queued with a free worker on the node that ran it: from
 * the later of its creation and the moment that worker finished its previous job, to its start.
 * A node's workers are not told apart in the rows: each start takes the worker free the longest.
 * `afterPosts`: the wait began once every POST had been answered (no uploads competing).
 */
function freeWorkerWaits(jobs: JobTimes[], workersByNode: Map<string, number>, lastAnswer: number): SetupResult['freeWorkerWait'] {
  const waits: SetupResult['freeWorkerWait'] = [];
  for (const [node, workers] of workersByNode) {
    const free = Array.from({ length: workers }, () => -Infinity);
    const mine = jobs.filter((j) => j.leaseOwner === node);
    for (const job of mine.sort((a, b) => a.startedAt! - b.startedAt!)) {
      const slot = free.indexOf(Math.min(...free));
      const since = Math.max(free[slot], job.createdAt);
      waits.push({ ms: Math.max(0, job.startedAt! - since), afterPosts: since > lastAnswer });
      free[slot] = job.finishedAt!;
    }
  }
  return waits;
}

/** The burst's drain: first start to last finish, jobs per second, and the share of it the workers were running jobs. */
function drain(jobs: JobTimes[], workers: number): SetupResult['drain'] {
  const first = Math.min(...jobs.map((j) => j.startedAt!));
  const last = Math.max(...jobs.map((j) => j.finishedAt!));
  const busy = jobs.reduce((sum, j) => sum + (j.finishedAt! - j.startedAt!), 0);
  const seconds = (last - first) / 1000;
  return { seconds, jobsPerS: jobs.length / seconds, utilisation: busy / (workers * (last - first)) };
}

function report(results: SetupResult[], o: Options): void {
  const pq = (values: number[]) => `${quantile(values, 0.5).toFixed(0)} / ${quantile(values, 0.99).toFixed(0)} / ${Math.max(...values).toFixed(0)}`;
  console.log(`\nIdle: ${o.idle} tamper checks one at a time (ms, p50 / p99 / max; clocks: one machine)`);
  console.log(`| deployment | POST to start | of which POST to accepted (HTTP, checks) | accepted to start (queue) | POST answered | job run | p99 < ${TARGET_IDLE_P99_MS} ms |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    const toStart = r.idle.map((s) => s.job.startedAt! - s.sentAt);
    console.log(
      `| ${r.label} | ${pq(toStart)} | ${pq(r.idle.map((s) => s.job.createdAt - s.sentAt))} | ${pq(r.idle.map((s) => s.job.startedAt! - s.job.createdAt))} | ` +
        `${pq(r.idle.map((s) => s.answeredAt - s.sentAt))} | ${pq(r.idle.map((s) => s.job.finishedAt! - s.job.startedAt!))} | ${quantile(toStart, 0.99) < TARGET_IDLE_P99_MS ? 'yes' : 'no'} |`,
    );
  }

  console.log(`\nBurst: ${o.burst} tamper checks POSTed at once, one connection each (ms, p50 / p99 / max)`);
  console.log('| deployment | POST answered | POST to start (backlog included) | queued with a free worker, to start: all | of them after the last POST | job run | drain | jobs/s | workers busy | jobs per node |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const nodes = [...r.perNode].sort().map(([n, c]) => `${n} ${c}`).join(', ');
    const after = r.freeWorkerWait.filter((w) => w.afterPosts).map((w) => w.ms);
    console.log(
      `| ${r.label} | ${pq(r.burst.map((s) => s.answeredAt - s.sentAt))} | ${pq(r.burst.map((s) => s.job.startedAt! - s.sentAt))} | ` +
        `${pq(r.freeWorkerWait.map((w) => w.ms))} | ${after.length > 0 ? `${pq(after)} (${after.length} jobs)` : '-'} | ${pq(r.burst.map((s) => s.job.finishedAt! - s.job.startedAt!))} | ` +
        `${r.drain.seconds.toFixed(1)} s | ${r.drain.jobsPerS.toFixed(1)} | ${(r.drain.utilisation * 100).toFixed(0)}% | ${nodes} |`,
    );
  }

  const pgResults = results.filter((r) => r.statements);
  if (pgResults.length === 0) return;
  console.log('\nPostgreSQL statements per job (server ms per call in brackets); idle nodes: per node-second');
  const operations = new Set(pgResults.flatMap((r) => [...r.statements!.quiet, ...r.statements!.idle, ...r.statements!.burst].map((s) => s.operation)));
  const columns = pgResults.flatMap((r) => [`${r.label}: idle run`, `${r.label}: burst`, `${r.label}: quiet, per node-s`]);
  console.log(`| operation | ${columns.join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  const cell = (counts: StatementCount[], per: number, op: string) => {
    const c = counts.find((s) => s.operation === op);
    return c ? `${(c.calls / per).toFixed(2)} (${(c.totalMs / c.calls).toFixed(2)})` : '-';
  };
  const total = (counts: StatementCount[], per: number) =>
    `${(counts.reduce((n, s) => n + s.calls, 0) / per).toFixed(2)} (${(counts.reduce((n, s) => n + s.totalMs, 0) / per).toFixed(2)} ms)`;
  for (const op of [...operations].sort()) {
    const cells = pgResults.flatMap((r) => {
      const s = r.statements!;
      return [cell(s.idle, r.idle.length, op), cell(s.burst, r.burst.length, op), cell(s.quiet, s.quietNodeSeconds, op)];
    });
    console.log(`| ${op} | ${cells.join(' | ')} |`);
  }
  const totals = pgResults.flatMap((r) => {
    const s = r.statements!;
    return [total(s.idle, r.idle.length), total(s.burst, r.burst.length), total(s.quiet, s.quietNodeSeconds)];
  });
  console.log(`| all (server ms in all) | ${totals.join(' | ')} |`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
