// Upgrades: a database of an earlier release opens with this one, with nothing lost. Frozen
// schemas and rows (helpers/release-schemas.ts) stand for the releases; each module's tables
// then have a version of their own, migrated once however many nodes start together.
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { cameraChecks, cameraReferences, getCamera } from '../lib/cameras/camera-store.js';
import { cameraFinishHook } from '../lib/cameras/check-outcome.js';
import type { Database } from '../lib/db/database.js';
import { moduleVersions } from '../lib/db/migrations.js';
import { PostgresDatabase } from '../lib/db/postgres-database.js';
import { SqliteDatabase } from '../lib/db/sqlite-database.js';
import { JobStore, type JobRecord } from '../lib/jobs/store.js';
import { pendingDeliveries } from '../lib/webhooks/deliveries.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import { ALL_SCHEMAS, describeBackends, newDatabaseUrl } from './helpers/backends.js';
import { rejection } from './helpers/until.js';
import { FIRST_RELEASE_SQLITE, SINGLE_VERSION_RELEASE_POSTGRES, SINGLE_VERSION_RELEASE_SQLITE, singleVersionReleaseRows } from './helpers/release-schemas.js';

const silent = pino({ level: 'silent' });
const LONG_LEASE_MS = 30_000;
const CURRENT_VERSIONS = { cameras: 3, jobs: 3, sessions: 1, webhooks: 2 };

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describeBackends('store migrations', function (backend) {
  let dir: string;
  let opened: JobStore[] = [];

  beforeEach(() => {
    dir = tempDataDir();
  });
  afterEach(async () => {
    for (const s of opened) await s.close();
    opened = [];
    removeTempDir(dir);
  });

  /** A database as the last single-version release left it: its location for open(). */
  async function singleVersionRelease(): Promise<string> {
    const rows = singleVersionReleaseRows('references/re/ref-renewed.jpg', path.join(dir, 'references/re/ref-renewed.jpg'));
    if (backend.name === 'sqlite') {
      const file = path.join(dir, 'jobs.sqlite');
      const old = new BetterSqlite(file);
      old.pragma('journal_mode = WAL');
      old.exec(SINGLE_VERSION_RELEASE_SQLITE);
      for (const sql of rows) old.exec(sql);
      old.close();
      return file;
    }
    const url = await newDatabaseUrl();
    await query(url, SINGLE_VERSION_RELEASE_POSTGRES);
    for (const sql of rows) await query(url, sql);
    return url;
  }

  async function openDatabase(where: string): Promise<Database> {
    return backend.name === 'sqlite' ? new SqliteDatabase(where) : PostgresDatabase.open({ url: where, logger: silent });
  }

  async function open(where: string): Promise<JobStore> {
    const store = await JobStore.open(await openDatabase(where), ALL_SCHEMAS);
    opened.push(store);
    return store;
  }

  it('a database of the last single-version release upgrades on open, with every record, camera and event kept', async function () {
    this.timeout(60_000);
    const where = await singleVersionRelease();
    const store = await open(where);
    expect(await moduleVersions(store.db.sql)).to.deep.equal(CURRENT_VERSIONS);

    expect(await store.get('done-1')).to.deep.equal({
      id: 'done-1',
      analytic: 'face_log',
      state: 'done',
      attempts: 1,
      createdAt: 1001,
      finishedAt: 2001,
      message: 'Found 1 sightings, 1 tracks, 9 faces',
      input: { videoPath: 'b.mp4' },
      result: { number_of_sightings: 1 },
      error: null,
      report: null,
      startedAt: 1500,
      leaseOwner: 'node-a',
    });
    expect((await store.get('failed-1'))!.error).to.deep.equal({ code: 'decode_failed', message: 'no' });
    expect((await store.recent('kamcheck', 10)).map((j) => j.id)).to.deep.equal(['pending-check', 'check-1', 'failed-1']);
    expect(await store.unfinishedCount()).to.equal(2);
    // The totals of finished jobs start from the rows there were.
    const counts = (await store.countsByState()).map((c) => `${c.analytic}/${c.state}=${c.count}`).sort();
    expect(counts).to.deep.equal(['face_log/done=1', 'face_log/processing=1', 'kamcheck/done=1', 'kamcheck/failed=1', 'kamcheck/queued=1']);

    expect(await getCamera(store.db, 'lobby')).to.include({ state: 'ok', lastJobId: 'check-1', referenceCount: 1 });
    expect((await cameraReferences(store.db, 'lobby')).map((r) => r.id)).to.deep.equal(['ref-1']);
    expect((await cameraChecks(store.db, 'lobby')).map((c) => c.jobId)).to.deep.equal(['check-1']);
    expect(await pendingDeliveries(store.db)).to.equal(1);

    // The check that was queued at the upgrade finishes as a camera check: its bookkeeping moved
    // out of its input, and the worker's report of a renewed reference is recorded.
    store.onFinish(cameraFinishHook({ alarmAfter: 2, clearAfter: 2, offlineAfter: 2, targets: { webhookUrl: null } }), (err) => {
      throw err;
    });
    let job: JobRecord | null;
    while ((job = await store.claim('node-b', LONG_LEASE_MS)) && job.id !== 'pending-check') await store.complete({ id: job.id, attempt: job.attempts }, 'ok', {});
    expect(job, 'the pending check was claimed').to.not.equal(null);
    expect(await store.complete({ id: job!.id, attempt: job!.attempts }, 'Tampering probability 0%', { probability: 0 }, { report: { renewedReference: true } })).to.equal(true);
    expect((await cameraChecks(store.db, 'lobby')).map((c) => c.jobId)).to.deep.equal(['pending-check', 'check-1']);
    const renewed = (await cameraReferences(store.db, 'lobby')).find((r) => r.id === 'ref-renewed');
    expect(renewed).to.include({ slot: 10, sourceJob: 'pending-check', file: 'references/re/ref-renewed.jpg', width: 320, height: 240 });
    await store.close();
    opened.pop();

    // Opened again: nothing runs twice, nothing is lost.
    const again = await open(where);
    expect(await moduleVersions(again.db.sql)).to.deep.equal(CURRENT_VERSIONS);
    expect((await again.get('pending-check'))!.state).to.equal('done');
    expect(await getCamera(again.db, 'lobby')).to.include({ lastJobId: 'pending-check', referenceCount: 2 });
  });

  it('refuses a database whose tables a newer release migrated', async () => {
    const where = backend.name === 'sqlite' ? path.join(dir, 'jobs.sqlite') : await newDatabaseUrl();
    const first = await open(where);
    await first.db.sql.run(`UPDATE schema_modules SET version = 99 WHERE module = 'jobs'`);
    await first.close();
    opened.pop();
    const db = await openDatabase(where);
    try {
      const err = await rejection(JobStore.open(db, ALL_SCHEMAS));
      expect(err.message).to.equal(`the database's jobs tables are at version 99, newer than this release knows (3): run the newer release`);
    } finally {
      await db.close();
    }
  });

  if (backend.name === 'sqlite') {
    it('a file of the first release (no user_version) upgrades on open: its rows readable and claimable, its pages freed on request', async () => {
      const file = path.join(dir, 'jobs.sqlite');
      const old = new BetterSqlite(file);
      old.exec(FIRST_RELEASE_SQLITE);
      const row = old.prepare('INSERT INTO jobs (id, analytic, state, attempts, created_at, finished_at, message, input, result, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
      row.run('queued-1', 'kamcheck', 'queued', 0, 1000, null, 'Queued', '{"video":"a.mp4"}', null, null);
      row.run('done-1', 'face_log', 'done', 1, 1001, 2001, 'Found 1 sightings', '{"video":"b.mp4"}', '{"sightings":[1]}', null);
      row.run('running-1', 'kamcheck', 'processing', 1, 1002, null, 'Processing frame 3 of 25', '{}', null, null);
      expect(old.pragma('user_version', { simple: true })).to.equal(0);
      expect(old.pragma('auto_vacuum', { simple: true })).to.equal(0);
      old.close();

      const upgraded = await open(file);
      expect(await moduleVersions(upgraded.db.sql)).to.deep.equal(CURRENT_VERSIONS);
      expect(await upgraded.get('done-1')).to.deep.include({ state: 'done', finishedAt: 2001, result: { sightings: [1] }, startedAt: null, leaseOwner: null });
      const claimed: JobRecord[] = [];
      for (let job; (job = await upgraded.claim('n1', LONG_LEASE_MS)); ) claimed.push(job);
      expect(claimed.map((j) => [j.id, j.attempts])).to.deep.equal([['queued-1', 1], ['running-1', 2]]);
      await upgraded.close();
      opened.pop();
      const check = new BetterSqlite(file, { readonly: true });
      expect(check.pragma('auto_vacuum', { simple: true }), 'incremental').to.equal(2);
      check.close();
    });
  } else {
    it('nodes that open one new database at once all succeed; it is migrated once', async () => {
      const url = await newDatabaseUrl();
      const nodes = await Promise.all(Array.from({ length: 6 }, () => open(url)));
      for (const node of nodes) expect(await moduleVersions(node.db.sql)).to.deep.equal(CURRENT_VERSIONS);
      const inserted = await nodes[0].insert({ id: 'kept', analytic: 'kamcheck', input: { video: 'a.mp4' } });
      expect(await nodes[5].get('kept')).to.deep.equal(inserted);
    });

    it('close leaves no connection behind, even right after open (its LISTEN connection may still be opening)', async () => {
      const url = await newDatabaseUrl();
      const database = new URL(url).pathname.slice(1);
      const sessions = async () => (await query(url, `SELECT pid FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`)).length;
      for (let i = 0; i < 3; i++) {
        const db = await PostgresDatabase.open({ url, logger: silent });
        await db.holdName(`node-${i}`);
        await db.close();
      }
      // A connection still opening when close ran would show up by now and stay.
      await new Promise((r) => setTimeout(r, 500));
      expect(await sessions()).to.equal(0);
    });
  }
});

