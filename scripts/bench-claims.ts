// Claim capacity of the job store itself, no service around it (bench-queue.ts runs it): N no-op
// jobs are inserted, then K claimers each loop claim() + complete() until the queue is empty, as
// K nodes with one free worker each would. Counts claims per second and checks that no job was
// claimed twice; then, in as many loops, a quarter as many whole jobs, each the 10 statements the
// service sends PostgreSQL for a tamper check (jobs/s). Each round first measures the store's own
// `SELECT 1` (ping()) on the same K connections for a second: the ratio of the two says what a
// claim costs in round trips, which varies less than either figure on a shared machine.
//
// PostgreSQL: one JobStore, K of its pool's connections claiming. K nodes would each add a
// LISTEN connection, and the server would send each of them every notification: left out here.
// First on the durable server (startBenchPostgres), then with fsync and full-page writes off as
// the tests run it: the two bracket a disk that flushes slowly (this machine's) and one that
// flushes fast. On the durable server also: a round with a history of finished jobs in the
// table (and what /metrics, POST and history queries then cost), and durable commits per second
// with and without pg_notify, which is what bounds the claims there. SQLite: one claimer, for
// reference (one process owns the file).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { PostgresDatabase } from '../lib/db/postgres-database.js';
import { SqliteDatabase } from '../lib/db/sqlite-database.js';
import { storesOn, type TestStores } from '../testkit/stores.js';
import { median } from '../lib/stats.js';
import type { PrivatePostgres } from '../testkit/postgres.js';
import { BENCH_QUERY_TAG, configure, withClient } from './bench-deployment.js';
import { readStatementStats, resetStatementStats } from './bench-statements.js';

export interface ClaimOptions {
  /** Jobs per round. */
  jobs: number;
  rounds: number;
  /** Concurrent claimers (PostgreSQL). */
  claimers: number[];
  /** Finished jobs already in the table for the history round (0: no such round). */
  history: number;
}

/** How long each round's `SELECT 1` baseline runs. */
const BASELINE_MS = 1000;
/** Concurrent inserts while the queue is filled (as several nodes accepting uploads). */
const INSERTERS = 4;
/** A round runs this fraction of its jobs again as whole jobs (10 statements each, not 2). */
const WHOLE_JOB_SHARE = 4;
/** The lease a claimer takes; far longer than a round, so no lease runs out. */
const LEASE_MS = 600_000;

interface Round {
  claimsPerS: number;
  pingsPerS: number;
  insertsPerS: number;
  /** Whole jobs per second: every statement the service sends for a tamper check (jobCycles). */
  jobsPerS: number;
}

const logger = pino({ level: 'warn' });

/**
 * On `postgres` as startBenchPostgres() set it up (durable, pg_stat_statements), then with fsync
 * and full-page writes off as the tests run it (a restart), then SQLite.
 */
export async function benchClaims(postgres: PrivatePostgres, o: ClaimOptions): Promise<void> {
  console.log(`\nClaim capacity: ${o.jobs} no-op jobs per round, claim() + complete() until empty; ${o.rounds} rounds, median (min-max)`);
  console.log('| store | claimers | claims/s | SELECT 1/s on as many connections | claims / SELECT 1 | inserts/s (4 at once) | server ms per claim / complete | whole jobs/s (10 statements) |');
  console.log('|---|---|---|---|---|---|---|---|');
  await postgresRows(postgres.url, o, 'PostgreSQL');
  // Printed after the claims table.
  const notes: string[] = [];
  if (o.history > 0) notes.push(...(await historyRound(postgres.url, o)));
  notes.push(...(await commitRates(postgres.url, o)));
  await configure(postgres, { fsync: 'off', full_page_writes: 'off' });
  await postgresRows(postgres.url, o, 'PostgreSQL, fsync off (as in tests)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-claims-'));
  const sqlite = await storesOn(new SqliteDatabase(path.join(dir, 'appliance.sqlite')));
  try {
    const rounds: Round[] = [];
    for (let r = 0; r < o.rounds; r++) rounds.push(await round(sqlite, 1, o.jobs, `sqlite-r${r}`));
    printRow('SQLite', 1, rounds, '');
  } finally {
    await sqlite.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const line of notes) console.log(line);
}

async function postgresRows(url: string, o: ClaimOptions, label: string): Promise<void> {
  // Every module's tables go, to be migrated afresh.
  await withClient(url, (c) => c.query(`${BENCH_QUERY_TAG} DROP SCHEMA public CASCADE; CREATE SCHEMA public`));
  for (const k of o.claimers) {
    const store = await storesOn(await PostgresDatabase.open({ url, logger, poolSize: Math.max(k, INSERTERS) }));
    try {
      const rounds: Round[] = [];
      await resetStatementStats(url);
      for (let r = 0; r < o.rounds; r++) {
        await withClient(url, (c) => c.query(`${BENCH_QUERY_TAG} TRUNCATE jobs, job_totals`));
        rounds.push(await round(store, k, o.jobs, `k${k}r${r}`));
      }
      printRow(label, k, rounds, await serverMs(url));
    } finally {
      await store.close();
    }
  }
}

/**
 * Durable commits per second on K connections, each a one-row UPDATE, without and with a
 * pg_notify in the same statement (as the store's insert() and complete() do). PostgreSQL holds a
 * server-wide lock from a notifying transaction's pre-commit until after its commit record is
 * flushed, so notifying commits do not share WAL flushes (group commit) the way plain ones do.
 */
async function commitRates(url: string, o: ClaimOptions): Promise<string[]> {
  await withClient(url, (c) =>
    c.query(`${BENCH_QUERY_TAG} CREATE TABLE IF NOT EXISTS bench_commits (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
             INSERT INTO bench_commits SELECT i, 0 FROM generate_series(0, 255) AS i ON CONFLICT DO NOTHING`),
  );
  const plain = `${BENCH_QUERY_TAG} UPDATE bench_commits SET n = n + 1 WHERE id = $1`;
  const notifying = `${BENCH_QUERY_TAG} WITH u AS (UPDATE bench_commits SET n = n + 1 WHERE id = $1 RETURNING id) SELECT pg_notify('bench_commits', 'x') FROM u`;
  const lines = [
    `\nDurable commits/s of a one-row UPDATE, without and with pg_notify in it (${o.rounds} rounds of ${BASELINE_MS / 1000} s, median (min-max))`,
    '| connections | plain | with pg_notify |',
    '|---|---|---|',
  ];
  for (const k of o.claimers) {
    const pool = new pg.Pool({ connectionString: url, max: k, application_name: 'bench' });
    try {
      const rates: Record<'plain' | 'notifying', number[]> = { plain: [], notifying: [] };
      for (let r = 0; r < o.rounds; r++) {
        for (const [name, sql] of [['plain', plain], ['notifying', notifying]] as const) {
          let n = 0;
          const t = performance.now();
          await Promise.all(
            Array.from({ length: k }, async (_, i) => {
              while (performance.now() - t < BASELINE_MS) {
                await pool.query(sql, [i]);
                n++;
              }
            }),
          );
          rates[name].push((n / (performance.now() - t)) * 1000);
        }
      }
      lines.push(`| ${k} | ${spread(rates.plain)} | ${spread(rates.notifying)} |`);
    } finally {
      await pool.end();
    }
  }
  return lines;
}

/**
 * The same claims with the finished jobs of a long-running service already in the table: claims
 * look at unfinished jobs only (a partial index), but /metrics counts every row.
 */
async function historyRound(url: string, o: ClaimOptions): Promise<string[]> {
  await withClient(url, async (admin) => {
    await admin.query(`${BENCH_QUERY_TAG} TRUNCATE jobs, job_totals`);
    await admin.query(
      `${BENCH_QUERY_TAG} INSERT INTO jobs (id, analytic, state, attempts, created_at, started_at, finished_at, message, input, result, lease_owner)
         SELECT 'old-' || i, 'kamcheck', 'done', 1, i, i, i, 'Done', '{"videoPath":"/data/jobs/x/input/video"}', '{"tampered":false}', 'node-1'
         FROM generate_series(1, $1) AS i`,
      [o.history],
    );
    await admin.query(`${BENCH_QUERY_TAG} VACUUM ANALYZE jobs`);
  });
  const k = o.claimers.includes(4) ? 4 : o.claimers[0];
  const stores = await storesOn(await PostgresDatabase.open({ url, logger, poolSize: Math.max(k, INSERTERS) }));
  const store = stores.jobs;
  try {
    await resetStatementStats(url);
    const rounds: Round[] = [];
    for (let r = 0; r < o.rounds; r++) rounds.push(await round(stores, k, o.jobs, `history-r${r}`));
    printRow(`PostgreSQL, ${o.history.toLocaleString('en')} finished jobs in the table`, k, rounds, await serverMs(url));
    const timed = async (what: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        await what();
        times.push(performance.now() - t);
      }
      return median(times).toFixed(1);
    };
    return [
      `\nWith ${o.history.toLocaleString('en')} finished jobs in the table: countsByState() (each /metrics scrape, each node) ${await timed(() => store.countsByState())} ms, ` +
        `unfinishedCount() (three times per POST) ${await timed(() => store.unfinishedCount())} ms, recent(100) ${await timed(() => store.recent('kamcheck', 100))} ms, ` +
        `recent(100, offset 10000) ${await timed(() => store.recent('kamcheck', 100, 10_000))} ms (median of 5)`,
    ];
  } finally {
    await stores.close();
  }
}

/** Fills the queue with `jobs` no-op jobs, then K claimers empty it. Throws when a job was claimed twice or not at all. */
async function round(stores: TestStores, k: number, jobs: number, prefix: string): Promise<Round> {
  const store = stores.jobs;
  const pingsPerS = await pingRate(stores, k);
  const done = async () => (await store.countsByState()).find((c) => c.analytic === 'noop' && c.state === 'done')?.count ?? 0;
  const doneBefore = await done();
  let next = 0;
  let t = performance.now();
  await Promise.all(
    Array.from({ length: INSERTERS }, async () => {
      while (next < jobs) await store.insert({ id: `${prefix}-${next++}`, analytic: 'noop', input: {} });
    }),
  );
  const insertsPerS = (jobs / (performance.now() - t)) * 1000;
  const claimed = new Map<string, number>();
  t = performance.now();
  await Promise.all(
    Array.from({ length: k }, async (_, i) => {
      for (;;) {
        const job = await store.claim(`claimer-${i}`, LEASE_MS);
        if (!job) return;
        if (job.attempts !== 1) throw new Error(`job ${job.id} claimed at attempt ${job.attempts}`);
        claimed.set(job.id, (claimed.get(job.id) ?? 0) + 1);
        await store.complete({ id: job.id, attempt: job.attempts }, 'Done', {});
      }
    }),
  );
  const claimsPerS = (jobs / (performance.now() - t)) * 1000;
  const twice = [...claimed.values()].filter((n) => n > 1).length;
  if (claimed.size !== jobs || twice > 0) throw new Error(`${jobs} jobs: ${claimed.size} claimed, ${twice} of them more than once`);
  const doneNow = (await done()) - doneBefore;
  if (doneNow !== jobs) throw new Error(`${jobs} jobs claimed but ${doneNow} done`);
  const whole = Math.ceil(jobs / WHOLE_JOB_SHARE);
  const jobsPerS = await jobCycles(store, k, whole, `${prefix}-whole`);
  const wholeDone = (await done()) - doneBefore - jobs;
  if (wholeDone !== whole) throw new Error(`${whole} whole jobs run but ${wholeDone} done`);
  return { claimsPerS, pingsPerS, insertsPerS, jobsPerS };
}

/**
 * K loops, each sending the statements of one tamper check after another, as bench-queue.ts
 * counts them on the service (KAMCHECK_WAIT_MS=0): the POST's two counts of unfinished jobs,
 * the insert and two reads, then a claim, three progress messages and the complete. Claims take
 * the oldest job, which may be another loop's. Resolves with jobs per second.
 */
async function jobCycles(store: TestStores['jobs'], k: number, jobs: number, prefix: string): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: k }, async (_, i) => {
      while (next < jobs) {
        const id = `${prefix}-${next++}`;
        for (let c = 0; c < 2; c++) await store.unfinishedCount();
        await store.insert({ id, analytic: 'noop', input: {} });
        await store.get(id);
        await store.get(id);
        // A claim sees the jobs committed when it started: one inserted by another loop a moment
        // later is not there yet, while this loop's own may be taken by a third. The service
        // claims again at the insert's notification; the loop claims again at once.
        let job = null;
        for (let tries = 0; !job && tries < 100; tries++) job = await store.claim(`claimer-${i}`, LEASE_MS);
        if (!job || job.attempts !== 1) throw new Error(`no job to claim, or claimed twice: ${JSON.stringify(job)}`);
        const claim = { id: job.id, attempt: job.attempts };
        for (let m = 1; m <= 3; m++) await store.setMessage(claim, `Processing: step ${m} of 3`);
        if (!(await store.complete(claim, 'Done', {}))) throw new Error(`job ${job.id} lost its claim`);
      }
    }),
  );
  return (jobs / (performance.now() - t)) * 1000;
}

/** `SELECT 1` per second through the database (ping()), K at once. */
async function pingRate(stores: TestStores, k: number): Promise<number> {
  let n = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (performance.now() - t < BASELINE_MS) {
        await stores.db.ping();
        n++;
      }
    }),
  );
  return (n / (performance.now() - t)) * 1000;
}

/** Mean server time of the claim and the complete statements since the last reset. */
async function serverMs(url: string): Promise<string> {
  const stats = await readStatementStats(url);
  const mean = (op: string) => {
    const s = stats.find((x) => x.operation === op);
    return s && s.calls > 0 ? (s.totalMs / s.calls).toFixed(3) : '-';
  };
  return `${mean('claim')} / ${mean('complete')}`;
}

/** "median (min-max)", or the value alone. */
function spread(values: number[]): string {
  const m = median(values).toFixed(0);
  return values.length > 1 ? `${m} (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})` : m;
}

function printRow(store: string, k: number, rounds: Round[], server: string): void {
  const ratio = median(rounds.map((r) => r.claimsPerS / r.pingsPerS));
  console.log(
    `| ${store} | ${k} | ${spread(rounds.map((r) => r.claimsPerS))} | ${spread(rounds.map((r) => r.pingsPerS))} | ${ratio.toFixed(3)} | ${spread(rounds.map((r) => r.insertsPerS))} | ${server || '-'} | ${spread(rounds.map((r) => r.jobsPerS))} |`,
  );
}
