// `make bench`: the job store at its bound. Record retention (lib/jobs/retention.ts) lets
// the store grow to RECORD_RETENTION_DAYS (90) of finished jobs and no further; this bench asks
// whether a store that full serves the API as fast as an empty one, what a sweep costs the
// requests beside it, and whether the disk space comes back.
//
// Per backend (SQLite; PostgreSQL on a private server with durable settings, bench-deployment.ts)
// two stores are filled straight in the database, then the service is started on each in this
// process (testkit/service.ts, WORKERS=1, KAMCHECK_WAIT_MS=0):
// - empty: only what the reads need: EMPTY_ROWS jobs (history page 100 of 50 exists) and 1000
//   cameras, each with a reference and 50 checks;
// - full: --rows finished jobs (2,000,000) and the same cameras. 90 days of 1000 cameras checked
//   every 5 minutes would be 26 million rows, more than this machine fills in minutes; 2 million
//   is about one check per camera an hour. The rows look like the service's (tamper checks with
//   their input, result and message; one in 20 a face log), are counted in job_totals, and span
//   the last 89 days, so the service's own start-up sweep at 90 days deletes nothing.
// On both: GET /kamcheck/<job_id> (ids spread over the table), history pages 1 and 100 of 50,
// /metrics, /healthz and GET /cameras/<camera>, each READS times after a warm-up; and POST
// /kamcheck (a 20-frame clip and its reference) to the job row's started_at (the worker's claim,
// read from the database). Reported: median and p95, and full / empty of the medians.
// On the full store then: a sweep of the oldest day's rows while a GET loop runs beside it (the
// longest a request waited behind a batch, against the same loop without a sweep), and a sweep of
// 90% of the rows with the database's size before and after. PostgreSQL's files do not shrink:
// for it also the dead rows left, the time autovacuum took to clear them, and the size after the
// deleted rows are written again (space reused, not grown).
// Targets: every read within 1.5x of the empty store; under 20% of the full size after the sweep.
//
// Options: --rows N (2000000) --backends sqlite,postgres
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { Database } from '../lib/db/database.js';
import { PostgresDatabase } from '../lib/db/postgres-database.js';
import { SqliteDatabase } from '../lib/db/sqlite-database.js';
import { DATABASE_FILE } from '../lib/db/open-database.js';
import { openStores } from '../lib/service.js';
import { CHECKS_KEPT } from '../lib/cameras/camera-store.js';
import { PURGE_BATCH, sweepRecords, type RecordSweep } from '../lib/jobs/retention.js';
import { quantile } from '../lib/stats.js';
import { testMedia } from '../testkit/media.js';
import { AUTH, removeTempDir, startTestService, tempDataDir, type TestService } from '../testkit/service.js';
import type { PrivatePostgres } from '../testkit/postgres.js';
import { multipartBody, multipartType } from '../testkit/hostile-corpus/multipart.js';
import { CAMERAS, cameraId, FACE_LOG_EVERY, fillCameras, fillJobs, type FillWindow } from '../testkit/store-fill.js';
import { startBenchPostgres, withClient } from './bench-deployment.js';

type Backend = 'sqlite' | 'postgres';
const NAMES: Record<Backend, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** Job rows of the full store (--rows): see the header. */
const DEFAULT_ROWS = 2_000_000;
/** 6000 jobs hold 5700 tamper checks: history page 100 of 50 exists. */
const EMPTY_ROWS = 6000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The rows span this many days up to now: the start-up sweep at RECORD_RETENTION_DAYS=90 deletes nothing. */
const FILL_SPAN_DAYS = 89;
const READS = 200;
const READ_WARM_UP = 20;
const POSTS = 40;
const POST_WARM_UP = 3;
/** After a job finished, before the next POST: its node removes the uploads and frees the worker. */
const IDLE_GAP_MS = 100;
const POLL_MS = 20;
/** The GET loop beside a sweep: a request, then this pause; and how long it runs without one. */
const LOOP_GAP_MS = 5;
const BASELINE_LOOP_MS = 5000;
const BIG_SWEEP_SHARE = 0.9;
/** PostgreSQL backends report table statistics at most once a second. */
const STATS_FLUSH_MS = 1500;
/** The bench waits this long for autovacuum to clear the deleted rows, then runs VACUUM itself. */
const AUTOVACUUM_WAIT_MS = 5 * 60_000;
/** Autovacuum has done its work once at most this share of the deleted rows is still dead. */
const DEAD_LEFT_SHARE = 0.05;
const TARGET_READ_RATIO = 1.5;
const TARGET_SIZE_SHARE = 0.2;
const POST_LABEL = 'POST /kamcheck to started_at (claim, from the DB)';

const silent = pino({ level: 'silent' });

/** Fills a new store: its tables as the service migrates them, the jobs, the cameras. Resolves with the seconds taken. */
async function fillStore(site: StoreSite, rows: number, startMs: number): Promise<number> {
  const t = performance.now();
  const db = await site.open();
  try {
    await openStores(db);
    if (db.backend === 'sqlite') await db.sql.exec('PRAGMA cache_size = -262144'); // 256 MiB, this connection only
    await fillJobs(db, { firstRow: 1, rows, startMs, spanMs: FILL_SPAN_DAYS * DAY_MS });
    await fillCameras(db, startMs);
    // A long-running server's tables have been vacuumed and analysed by autovacuum.
    if (db.backend === 'postgres') await db.sql.exec('VACUUM ANALYZE');
  } finally {
    await db.close();
  }
  return (performance.now() - t) / 1000;
}

/** Where a store lives: its DATA_DIR, and DATABASE_URL for PostgreSQL. */
interface StoreSite {
  dataDir: string;
  env: Record<string, string>;
  open(): Promise<Database>;
  remove(): Promise<void>;
}

async function storeSite(backend: Backend, server: PrivatePostgres | null, name: string): Promise<StoreSite> {
  const dataDir = tempDataDir();
  if (backend === 'sqlite') {
    return { dataDir, env: {}, open: async () => new SqliteDatabase(path.join(dataDir, DATABASE_FILE)), remove: async () => removeTempDir(dataDir) };
  }
  await withClient(server!.url, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(server!.url);
  url.pathname = `/${name}`;
  return {
    dataDir,
    env: { DATABASE_URL: url.toString() },
    open: () => PostgresDatabase.open({ url: url.toString(), logger: silent, poolSize: 2 }),
    remove: async () => {
      removeTempDir(dataDir);
      await withClient(server!.url, (c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`));
    },
  };
}

async function timedGet(url: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(url, { headers: { authorization: AUTH } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return performance.now() - t;
}

/** Job ids spread over the whole table (seq is the row number of a fresh store). */
async function spreadIds(db: Database, rows: number, count: number): Promise<string[]> {
  // + 1: with round row counts the evenly spread seqs are all multiples of FACE_LOG_EVERY, face logs.
  const seqs = Array.from({ length: count }, (_, k) => Math.floor(((k + 0.5) * rows) / count) + 1);
  const found = await db.sql.all<{ id: string }>(`SELECT id FROM jobs WHERE analytic = 'kamcheck' AND seq IN (${seqs.join(', ')})`);
  if (found.length < count / 2) throw new Error(`only ${found.length} of ${count} spread rows are tamper checks`);
  return found.map((r) => r.id);
}

async function measureReads(svc: TestService, rows: number): Promise<Map<string, number[]>> {
  const ids = await spreadIds(svc.service.db, rows, READS);
  const page100 = await (await fetch(`${svc.url}/kamcheck/100/50`, { headers: { authorization: AUTH } })).json();
  if (page100.tasks?.length !== 50) throw new Error(`history page 100 holds ${page100.tasks?.length} tasks, not 50`);
  const reads: [string, (n: number) => string][] = [
    ['GET /kamcheck/<job_id>', (n) => `/kamcheck/${ids[n % ids.length]}`],
    ['GET /kamcheck/1/50 (history page 1)', () => '/kamcheck/1/50'],
    ['GET /kamcheck/100/50 (history page 100)', () => '/kamcheck/100/50'],
    ['GET /metrics', () => '/metrics'],
    ['GET /healthz', () => '/healthz'],
    ['GET /cameras/<camera>', (n) => `/cameras/${cameraId((n * 7) % CAMERAS)}`],
  ];
  const times = new Map<string, number[]>();
  for (const [label, pathOf] of reads) {
    for (let n = 0; n < READ_WARM_UP; n++) await timedGet(svc.url + pathOf(n));
    const ms: number[] = [];
    for (let n = 0; n < READS; n++) ms.push(await timedGet(svc.url + pathOf(n)));
    times.set(label, ms);
  }
  return times;
}

/** POSTs one at a time, each after the last job finished: ms from just before sending to the job's started_at. */
async function postToStart(svc: TestService, body: Buffer): Promise<number[]> {
  const ms: number[] = [];
  for (let n = 0; n < POST_WARM_UP + POSTS; n++) {
    const sentAt = Date.now();
    const res = await fetch(`${svc.url}/kamcheck`, { method: 'POST', headers: { authorization: AUTH, 'content-type': multipartType() }, body: new Uint8Array(body) });
    const answer = (await res.json()) as { task?: { job_id: string } };
    if (res.status !== 200 || !answer.task) throw new Error(`POST /kamcheck answered ${res.status}: ${JSON.stringify(answer)}`);
    let job = await svc.service.jobs.get(answer.task.job_id);
    while (job?.finishedAt === null) {
      await sleep(POLL_MS);
      job = await svc.service.jobs.get(answer.task.job_id);
    }
    if (job?.state !== 'done') throw new Error(`job ${answer.task.job_id} ended ${job?.state}: ${job?.message}`);
    if (n >= POST_WARM_UP) ms.push(job.startedAt! - sentAt);
    await sleep(IDLE_GAP_MS);
  }
  return ms;
}

/** GET /kamcheck/<id> of the newest jobs (no sweep deletes them), one after another, until `until` settles. */
async function getLoop(svc: TestService, until: Promise<unknown>): Promise<number[]> {
  const ids = (await svc.service.jobs.recent('kamcheck', 100)).map((j) => j.id);
  let done = false;
  until.then(() => (done = true), () => (done = true));
  const ms: number[] = [];
  for (let n = 0; !done; n++) {
    ms.push(await timedGet(`${svc.url}/kamcheck/${ids[n % ids.length]}`));
    await sleep(LOOP_GAP_MS);
  }
  return ms;
}

interface TimedSweep extends RecordSweep {
  seconds: number;
}

async function sweep(svc: TestService, retentionMs: number): Promise<TimedSweep> {
  const t = performance.now();
  const result = await sweepRecords({ store: svc.service.jobs, recordRetentionMs: retentionMs, logger: silent, now: Date.now, reclaimSpace: () => svc.service.db.reclaimSpace() });
  return { ...result, seconds: (performance.now() - t) / 1000 };
}

/** A day's rows swept with a GET loop beside it, and the same loop for BASELINE_LOOP_MS before it. */
async function daySweep(svc: TestService): Promise<{ sweep: TimedSweep; during: number[]; without: number[] }> {
  const without = await getLoop(svc, sleep(BASELINE_LOOP_MS));
  const sweeping = sweep(svc, (FILL_SPAN_DAYS - 1) * DAY_MS);
  const during = await getLoop(svc, sweeping);
  return { sweep: await sweeping, during, without };
}

interface Sizes {
  sweep: TimedSweep;
  full: number;
  afterSweep: number;
  postgres?: SpaceReuse;
}

async function bigSweep(svc: TestService, startMs: number, rows: number): Promise<Sizes> {
  const db = svc.service.db;
  const full = await db.sizeBytes();
  const jobsFull = db.backend === 'postgres' ? await jobsSize(db) : null;
  const result = await sweep(svc, Math.round(FILL_SPAN_DAYS * DAY_MS * (1 - BIG_SWEEP_SHARE)));
  const afterSweep = await db.sizeBytes();
  // The deleted rows are written again into the window they were deleted from.
  const refill = { firstRow: rows + 1, rows: result.deleted, startMs, spanMs: Math.round(FILL_SPAN_DAYS * DAY_MS * BIG_SWEEP_SHARE) };
  return { sweep: result, full, afterSweep, postgres: jobsFull ? await reuseOfSpace(db, jobsFull, refill) : undefined };
}

/** PostgreSQL: the dead rows a sweep left, what cleared them and when, and the sizes once as many rows were written again. */
interface SpaceReuse {
  dead: number;
  by: string;
  vacuumSeconds: number;
  afterRefill: number;
  jobsFull: JobsSize;
  jobsRefilled: JobsSize;
}

async function reuseOfSpace(db: Database, jobsFull: JobsSize, refill: FillWindow): Promise<SpaceReuse> {
  await sleep(STATS_FLUSH_MS);
  const dead = await deadRows(db);
  const t = performance.now();
  let by = 'autovacuum';
  while ((await deadRows(db)) > refill.rows * DEAD_LEFT_SHARE) {
    if (performance.now() - t > AUTOVACUUM_WAIT_MS) {
      by = `VACUUM by the bench (autovacuum not done after ${AUTOVACUUM_WAIT_MS / 1000} s)`;
      await db.sql.exec('VACUUM jobs');
      break;
    }
    await sleep(1000);
  }
  const vacuumSeconds = (performance.now() - t) / 1000;
  await fillJobs(db, refill);
  return { dead, by, vacuumSeconds, afterRefill: await db.sizeBytes(), jobsFull, jobsRefilled: await jobsSize(db) };
}

/** The jobs table (rows, TOAST, free-space and visibility maps) and its indexes, bytes. */
interface JobsSize {
  table: number;
  indexes: number;
}

async function jobsSize(db: Database): Promise<JobsSize> {
  const row = await db.sql.get<{ t: string; i: string }>(`SELECT pg_table_size('jobs') AS t, pg_indexes_size('jobs') AS i`);
  return { table: Number(row?.t), indexes: Number(row?.i) };
}

async function deadRows(db: Database): Promise<number> {
  return Number((await db.sql.get<{ n: string }>(`SELECT n_dead_tup AS n FROM pg_stat_user_tables WHERE relname = 'jobs'`))?.n ?? 0);
}

interface StoreRun {
  fillSeconds: number;
  reads: Map<string, number[]>;
  day?: Awaited<ReturnType<typeof daySweep>>;
  sizes?: Sizes;
}

async function measureStore(backend: Backend, server: PrivatePostgres | null, rows: number, body: Buffer, full: boolean): Promise<StoreRun> {
  const site = await storeSite(backend, server, full ? 'store_full' : 'store_empty');
  try {
    const startMs = Date.now() - FILL_SPAN_DAYS * DAY_MS;
    const fillSeconds = await fillStore(site, rows, startMs);
    console.error(`${NAMES[backend]}: ${rows} jobs filled in ${fillSeconds.toFixed(1)} s`);
    const svc = await startTestService({ WORKERS: '1', KAMCHECK_WAIT_MS: '0', MIN_FREE_DISK_MB: '1', ...site.env }, site.dataDir);
    try {
      const reads = await measureReads(svc, rows);
      reads.set(POST_LABEL, await postToStart(svc, body));
      if (!full) return { fillSeconds, reads };
      const day = await daySweep(svc);
      return { fillSeconds, reads, day, sizes: await bigSweep(svc, startMs, rows) };
    } finally {
      await svc.stop();
    }
  } finally {
    await site.remove();
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const count = (n: number) => n.toLocaleString('en');
const pair = (ms: number[]) => `${quantile(ms, 0.5).toFixed(1)} / ${quantile(ms, 0.95).toFixed(1)}`;
const tail = (ms: number[]) => `${quantile(ms, 0.99).toFixed(1)} / ${Math.max(...ms).toFixed(1)}`;

function printTable(title: string, header: string[], rows: string[][]): void {
  console.log(`\n${title}\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

function report(rows: number, runs: { backend: Backend; empty: StoreRun; full: StoreRun }[]): void {
  const faceLogs = Math.floor(rows / FACE_LOG_EVERY);
  console.log(`\nStore bench: full = ${count(rows)} finished jobs (${count(rows - faceLogs)} tamper checks, ${count(faceLogs)} face logs) over the last ${FILL_SPAN_DAYS} days;`);
  console.log(`empty = a fresh store holding only what the reads need: ${count(EMPTY_ROWS)} jobs (history page 100 of 50 exists). Both: ${CAMERAS} cameras, a reference and ${CHECKS_KEPT} checks each.`);
  console.log(`Fill (PostgreSQL: VACUUM ANALYZE included): ${runs.map((r) => `${NAMES[r.backend]} ${r.full.fillSeconds.toFixed(1)} s (empty ${r.empty.fillSeconds.toFixed(1)} s)`).join(', ')}`);
  printTable(
    `Requests: ms, median / p95 of ${READS} after ${READ_WARM_UP} (POST: ${POSTS} one at a time after ${POST_WARM_UP}, from the client's clock before sending to the row's started_at)`,
    ['store', 'request', 'empty', 'full', 'full / empty (medians)', `within ${TARGET_READ_RATIO}x`],
    runs.flatMap((r) =>
      [...r.empty.reads].map(([label, emptyMs]) => {
        const fullMs = r.full.reads.get(label)!;
        const ratio = quantile(fullMs, 0.5) / quantile(emptyMs, 0.5);
        return [NAMES[r.backend], label, pair(emptyMs), pair(fullMs), ratio.toFixed(2), ratio <= TARGET_READ_RATIO ? 'yes' : 'no'];
      }),
    ),
  );
  printTable(
    `Retention sweeps of the full store (batches of ${PURGE_BATCH}); GET /kamcheck/<id> in a loop, ${LOOP_GAP_MS} ms apart, during the day's sweep and for ${BASELINE_LOOP_MS / 1000} s before it`,
    ['store', 'sweep', 'rows deleted', 'batches', 'duration', 'longest batch', 'GET p99 / max ms during the sweep', 'without a sweep'],
    runs.flatMap(({ backend, full: { day, sizes } }) => [
      [NAMES[backend], `a day (retention ${FILL_SPAN_DAYS - 1} d)`, ...sweepCells(day!.sweep), `${tail(day!.during)} (n = ${day!.during.length})`, tail(day!.without)],
      [NAMES[backend], `${BIG_SWEEP_SHARE * 100}% of the rows`, ...sweepCells(sizes!.sweep), '-', '-'],
    ]),
  );
  printTable(
    `Database size (sizeBytes(): SQLite file and WAL after reclaimSpace; PostgreSQL pg_database_size, whose files do not shrink: autovacuum makes the space reusable). Target: under ${TARGET_SIZE_SHARE * 100}% of full after the sweep`,
    ['store', 'full', `after the ${BIG_SWEEP_SHARE * 100}% sweep`, 'after / full', 'target', 'dead rows after the sweep', 'cleared by', 'after writing the deleted rows again', 'again / full', 'jobs table; its indexes: full -> again'],
    runs.map(({ backend, full: { sizes } }) => {
      const { full, afterSweep, postgres: p } = sizes!;
      const met = afterSweep / full < TARGET_SIZE_SHARE ? 'yes' : 'no';
      const parts = (j: JobsSize) => `${mib(j.table)}; ${mib(j.indexes)}`;
      const pgCells = p
        ? [count(p.dead), `${p.by}, ${p.vacuumSeconds.toFixed(0)} s`, mib(p.afterRefill), (p.afterRefill / full).toFixed(2), `${parts(p.jobsFull)} -> ${parts(p.jobsRefilled)}`]
        : ['-', '-', '-', '-', '-'];
      return [NAMES[backend], mib(full), mib(afterSweep), `${((afterSweep / full) * 100).toFixed(0)}%`, p ? `${met} (files keep their size)` : met, ...pgCells];
    }),
  );
}

const sweepCells = (s: TimedSweep) => [count(s.deleted), String(s.batches), `${s.seconds.toFixed(2)} s`, `${s.longestBatchMs.toFixed(1)} ms`];

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : fallback);
  const rows = Number(arg('rows', String(DEFAULT_ROWS)));
  const backends = arg('backends', 'sqlite,postgres').split(',') as Backend[];
  if (backends.some((b) => !(b in NAMES))) throw new Error(`--backends: sqlite and/or postgres, not ${backends.join(',')}`);
  if (!Number.isInteger(rows) || rows < EMPTY_ROWS) throw new Error(`--rows must be a whole number of at least ${EMPTY_ROWS}`);
  const media = testMedia();
  const body = multipartBody([
    { name: 'video', filename: 'clip.mp4', type: 'video/mp4', data: fs.readFileSync(media.clip) },
    { name: 'image', filename: 'reference.png', type: 'image/png', data: fs.readFileSync(media.reference) },
  ]);
  const server = backends.includes('postgres') ? await startBenchPostgres() : null;
  try {
    const runs = [];
    for (const backend of backends) {
      const empty = await measureStore(backend, server, EMPTY_ROWS, body, false);
      runs.push({ backend, empty, full: await measureStore(backend, server, rows, body, true) });
    }
    report(rows, runs);
  } finally {
    await server?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
