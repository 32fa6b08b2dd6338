// Upgrades: a database of an earlier release opens with this one, with nothing lost. Frozen
// schemas and rows (helpers/release-schemas.ts) stand for the releases; each module's tables
// then have a version of their own, migrated once however many nodes start together.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import BetterSqlite from 'better-sqlite3';
import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { cameraFinishHook } from '../lib/cameras/check-outcome.js';
import type { Database } from '../lib/db/database.js';
import { moduleVersions } from '../lib/db/migrations.js';
import { PostgresDatabase } from '../lib/db/postgres-database.js';
import { SqliteDatabase } from '../lib/db/sqlite-database.js';
import type { JobRecord } from '../lib/jobs/job-record.js';
import { openStores } from '../lib/service.js';
import { api, removeTempDir, startTestService, tempDataDir } from '../testkit/service.js';
import { describeBackends, newDatabaseUrl, storesOn, type TestStores } from './helpers/backends.js';
import { rejection, sleep } from './helpers/until.js';
import { FIRST_RELEASE_SQLITE, SINGLE_VERSION_RELEASE_POSTGRES, SINGLE_VERSION_RELEASE_SQLITE, singleVersionReleaseRows } from './helpers/release-schemas.js';

const silent = pino({ level: 'silent' });
const LONG_LEASE_MS = 30_000;
const CURRENT_VERSIONS = { audit: 1, cameras: 4, jobs: 4, sessions: 1, sources: 1, users: 1, webhooks: 2 };
/** When the box of test/fixtures/releases/96a78b5/ was killed: the time of its last accepted check. */
const KILLED_AT_96A78B5 = 1_795_809_812_347;

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
  let opened: TestStores[] = [];

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

  async function open(where: string): Promise<TestStores> {
    const stores = await storesOn(await openDatabase(where));
    opened.push(stores);
    return stores;
  }

  it('a database of the last single-version release upgrades on open, with every record, camera and event kept', async function () {
    this.timeout(60_000);
    const where = await singleVersionRelease();
    const stores = await open(where);
    const store = stores.jobs;
    expect(await moduleVersions(stores.db.sql)).to.deep.equal(CURRENT_VERSIONS);

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
      progress: null,
    });
    expect((await store.get('failed-1'))!.error).to.deep.equal({ code: 'decode_failed', message: 'no' });
    expect((await store.recent('kamcheck', 10)).map((j) => j.id)).to.deep.equal(['pending-check', 'check-1', 'failed-1']);
    expect(await store.unfinishedCount()).to.equal(2);
    // The totals of finished jobs start from the rows there were.
    const counts = (await store.countsByState()).map((c) => `${c.analytic}/${c.state}=${c.count}`).sort();
    expect(counts).to.deep.equal(['face_log/done=1', 'face_log/processing=1', 'kamcheck/done=1', 'kamcheck/failed=1', 'kamcheck/queued=1']);

    expect(await stores.cameras.get('lobby')).to.include({ state: 'ok', lastJobId: 'check-1', referenceCount: 1 });
    expect((await stores.cameras.references('lobby')).map((r) => r.id)).to.deep.equal(['ref-1']);
    expect((await stores.cameras.checks('lobby')).map((c) => c.jobId)).to.deep.equal(['check-1']);
    expect(await stores.outbox.pendingCount()).to.equal(1);

    // The check that was queued at the upgrade finishes as a camera check: its bookkeeping moved
    // out of its input, and the worker's report of a renewed reference is recorded.
    store.onFinish(cameraFinishHook({ ...stores, alarmAfter: 2, clearAfter: 2, offlineAfter: 2, targets: { webhookUrl: null }, dataDir: dir }), (err) => {
      throw err;
    });
    let job: JobRecord | null;
    while ((job = await store.claim('node-b', LONG_LEASE_MS)) && job.id !== 'pending-check') await store.complete({ id: job.id, attempt: job.attempts }, 'ok', {});
    expect(job, 'the pending check was claimed').to.not.equal(null);
    expect(await store.complete({ id: job!.id, attempt: job!.attempts }, 'Tampering probability 0%', { probability: 0 }, { report: { renewedReference: true } })).to.equal(true);
    expect((await stores.cameras.checks('lobby')).map((c) => c.jobId)).to.deep.equal(['pending-check', 'check-1']);
    const renewed = (await stores.cameras.references('lobby')).find((r) => r.id === 'ref-renewed');
    expect(renewed).to.include({ slot: 10, sourceJob: 'pending-check', file: 'references/re/ref-renewed.jpg', width: 320, height: 240 });
    await stores.close();
    opened.pop();

    // Opened again: nothing runs twice, nothing is lost.
    const again = await open(where);
    expect(await moduleVersions(again.db.sql)).to.deep.equal(CURRENT_VERSIONS);
    expect((await again.jobs.get('pending-check'))!.state).to.equal('done');
    expect(await again.cameras.get('lobby')).to.include({ lastJobId: 'pending-check', referenceCount: 2 });
  });

  it('refuses a database whose tables a newer release migrated', async () => {
    const where = backend.name === 'sqlite' ? path.join(dir, 'jobs.sqlite') : await newDatabaseUrl();
    const first = await open(where);
    await first.db.sql.run(`UPDATE schema_modules SET version = 99 WHERE module = 'jobs'`);
    await first.close();
    opened.pop();
    const db = await openDatabase(where);
    try {
      const err = await rejection(openStores(db));
      expect(err.message).to.equal(`the database's jobs tables are at version 99, newer than this release knows (${CURRENT_VERSIONS.jobs}): run the newer release`);
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
      expect(await upgraded.jobs.get('done-1')).to.deep.include({ state: 'done', finishedAt: 2001, result: { sightings: [1] }, startedAt: null, leaseOwner: null });
      const claimed: JobRecord[] = [];
      for (let job; (job = await upgraded.jobs.claim('n1', LONG_LEASE_MS)); ) claimed.push(job);
      expect(claimed.map((j) => [j.id, j.attempts])).to.deep.equal([['queued-1', 1], ['running-1', 2]]);
      await upgraded.close();
      opened.pop();
      const check = new BetterSqlite(file, { readonly: true });
      expect(check.pragma('auto_vacuum', { simple: true }), 'incremental').to.equal(2);
      check.close();
    });

    // A box of release 96a78b5 that checked camera "gate" (a reference set by hand, a check of it,
    // a check without a camera), gave it a paused stream source, signed the console in, had two
    // job.completed events it could not deliver, then was killed with -9 right after accepting a
    // check it had not run yet; test/fixtures/releases/96a78b5/ holds its jobs.sqlite and the
    // write-ahead log beside it, which holds every one of those writes (the file itself none).
    it('a box of the release before (96a78b5) killed with its records in the write-ahead log starts with its file renamed, nothing lost', async function () {
      this.timeout(60_000);
      const frozen = new URL('../../test/fixtures/releases/96a78b5/', import.meta.url);
      for (const name of ['jobs.sqlite', 'jobs.sqlite-wal']) fs.writeFileSync(path.join(dir, name), zlib.gunzipSync(fs.readFileSync(new URL(`${name}.gz`, frozen))));
      const files = () => fs.readdirSync(dir).filter((f) => f.includes('.sqlite')).sort();
      // The service's clock starts where the box was killed: its session (12 h) and records (90 days)
      // are as young as they were then, whatever the date of the run.
      const started = Date.now();
      const clock = { now: () => KILLED_AT_96A78B5 + (Date.now() - started) };
      let svc = await startTestService({ WORKERS: '0', TZ: 'UTC' }, dir, clock);
      try {
        expect(files()).to.include('appliance.sqlite').and.not.include('jobs.sqlite').and.not.include('jobs.sqlite-wal');
        expect(svc.logs.some((l) => l.msg === 'renamed the database file of an earlier release')).to.equal(true);
        expect(await moduleVersions(svc.service.db.sql)).to.deep.equal(CURRENT_VERSIONS);
        const tasks = (await api(`${svc.url}/kamcheck`)).body.tasks as { job_id: string; complete: boolean; camera?: string }[];
        expect(tasks.map((t) => [t.job_id, t.complete, t.camera ?? null])).to.deep.equal([
          ['4050613d-8223-45f2-be63-8b2b9e4cb765', false, 'gate'],
          ['31261d90-499d-4f9f-b724-aa92ceea9eb8', true, null],
          ['5d205ca8-bcb8-4b6b-8478-72f061c97553', true, 'gate'],
        ]);
        const gate = (await api(`${svc.url}/cameras/gate`)).body.camera;
        expect(gate).to.include({ state: 'ok', reference_count: 1 });
        expect(gate.checks.map((c: { job_id: string }) => c.job_id)).to.deep.equal(['5d205ca8-bcb8-4b6b-8478-72f061c97553']);
        expect(gate.source).to.include({ url: 'rtsp://viewer:***@127.0.0.1:1/gate', check_interval_s: 3600, enabled: false });
        // The two undelivered events are kept: pending, or given up once their retry window, which
        // counts in real time from the box's death, has passed.
        expect(await svc.service.db.sql.get('SELECT COUNT(*) AS n FROM webhook_outbox WHERE delivered_at IS NULL')).to.deep.equal({ n: 2 });
        expect(await svc.service.db.sql.get('SELECT COUNT(*) AS n FROM sessions')).to.deep.equal({ n: 1 });
        // The check accepted before the crash still finishes as a camera check: its bookkeeping is there.
        expect(await svc.service.db.sql.get('SELECT job_id FROM camera_pending_checks')).to.deep.equal({ job_id: '4050613d-8223-45f2-be63-8b2b9e4cb765' });
      } finally {
        await svc.stop();
      }
      // A second start finds the renamed file and renames nothing.
      svc = await startTestService({ WORKERS: '0', TZ: 'UTC' }, dir, clock);
      try {
        expect(svc.logs.some((l) => l.msg === 'renamed the database file of an earlier release')).to.equal(false);
        expect((await api(`${svc.url}/kamcheck`)).body.tasks).to.have.length(3);
      } finally {
        await svc.stop();
      }
    });
  } else {
    it('nodes that open one new database at once all succeed; it is migrated once', async () => {
      const url = await newDatabaseUrl();
      const nodes = await Promise.all(Array.from({ length: 6 }, () => open(url)));
      for (const node of nodes) expect(await moduleVersions(node.db.sql)).to.deep.equal(CURRENT_VERSIONS);
      const inserted = await nodes[0].jobs.insert({ id: 'kept', analytic: 'kamcheck', input: { video: 'a.mp4' } });
      expect(await nodes[5].jobs.get('kept')).to.deep.equal(inserted);
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
      await sleep(500);
      expect(await sessions()).to.equal(0);
    });
  }
});

