// What keeps the store bounded and loses nothing at its edges, on both backends: record
// retention (old finished tasks go with their camera checks; the newest 50 of each analytic,
// unfinished jobs and cameras stay), Idempotency-Key on POSTs, result files published only with
// an outcome the database accepted, a camera's uploaded reference stored with its job or not at
// all, and a second node of one name refused at start.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import type { Claim, JobRecord } from '../lib/jobs/job-record.js';
import { sweepRecords, KEEP_PER_ANALYTIC, PURGE_BATCH } from '../lib/jobs/retention.js';
import { DuplicateSubmissionError, type JobStore } from '../lib/jobs/store.js';
import { AUTH, PASSWORD, USER, api, form, removeTempDir, spawnService, startTestService, tempDataDir, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { rejection, sleep } from './helpers/until.js';
import { checkRaw, httpRequest, rawConnect } from './helpers/raw-http.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const LONG_LEASE_MS = 30_000;
const silent = pino({ level: 'silent' });
const claimOf = (job: JobRecord): Claim => ({ id: job.id, attempt: job.attempts });

describeBackends('store edges', function (backend) {
  this.timeout(120_000);

  describe('record retention', () => {
    let dir: string;
    let stores: TestStores;
    let store: JobStore;
    beforeEach(async () => {
      dir = tempDataDir();
      stores = await backend.openStores(dir);
      store = stores.jobs;
      store.onPurge((tx, ids) => stores.cameras.forgetChecksOfJobs(tx, ids));
    });
    afterEach(async () => {
      await stores.close();
      removeTempDir(dir);
    });
    const sweep = () => sweepRecords({ store, recordRetentionMs: 90 * DAY_MS, logger: silent, now: Date.now });

    /** A job that finished at `finishedAt`, through insert, claim and complete like the queue's. */
    async function finished(analytic: string, finishedAt: number): Promise<string> {
      const id = randomUUID();
      await store.insert({ id, analytic, input: {}, createdAt: finishedAt - 1000 });
      const job = (await store.claim('node-1', LONG_LEASE_MS))!;
      expect(job.id).to.equal(id);
      expect(await store.complete(claimOf(job), 'ok', { n: 1 }, {}, finishedAt)).to.equal(true);
      return id;
    }

    it('deletes finished records past the retention in batches, with their camera checks; keeps the newest 50 per analytic, unfinished jobs, cameras and totals', async () => {
      const now = Date.now();
      const old = now - 100 * DAY_MS;
      const oldRunning = randomUUID();
      await store.insert({ id: oldRunning, analytic: 'kamcheck', input: {}, createdAt: old });
      expect((await store.claim('node-0', LONG_LEASE_MS))!.id).to.equal(oldRunning);
      const oldChecks: string[] = [];
      const OLD = PURGE_BATCH + 100;
      for (let i = 0; i < OLD; i++) oldChecks.push(await finished('kamcheck', old + i));
      const recent: string[] = [];
      for (let i = 0; i < 5; i++) recent.push(await finished('kamcheck', now - DAY_MS + i));
      const oldFaceLogs: string[] = [];
      for (let i = 0; i < 10; i++) oldFaceLogs.push(await finished('face_log', old + i));
      const lateQueued = randomUUID();
      await store.insert({ id: lateQueued, analytic: 'kamcheck', input: {}, createdAt: old });
      // Checks of a camera: some of jobs to be deleted, some of kept ones.
      await stores.db.sql.run(`INSERT INTO cameras (id, state, state_since, streak, created_at) VALUES ('gate', 'ok', 1, 0, 1)`);
      const checked = [...oldChecks.slice(0, 3), ...oldChecks.slice(-2), recent[0]];
      for (const jobId of checked) {
        await stores.db.sql.run(`INSERT INTO camera_checks (camera, job_id, captured_at, finished_at, success, probability, state) VALUES ('gate', ?, 1, 1, 1, 0, 'ok')`, jobId);
      }
      const totals = await store.countsByState();

      const swept = await sweep();
      // The newest 50 tamper checks are the queued one, the recent five and the newest old ones.
      const keptOld = KEEP_PER_ANALYTIC - 1 - recent.length;
      expect(swept).to.deep.include({ deleted: OLD - keptOld, batches: 2 });
      const kamchecks = (await store.recent('kamcheck', 1000)).map((j) => j.id);
      expect(kamchecks).to.deep.equal([lateQueued, ...recent.slice().reverse(), ...oldChecks.slice(-keptOld).reverse(), oldRunning]);
      expect((await store.recent('face_log', 100)).map((j) => j.id)).to.deep.equal(oldFaceLogs.slice().reverse());
      expect(await store.get(oldChecks[0])).to.equal(null);
      const checks = await stores.db.sql.all<{ job_id: string }>(`SELECT job_id FROM camera_checks ORDER BY seq`);
      expect(checks.map((c) => c.job_id)).to.deep.equal([...oldChecks.slice(-2), recent[0]]);
      expect(await stores.cameras.get('gate')).to.not.equal(null);
      expect(await store.countsByState()).to.deep.equal(totals);

      // Nothing left to delete: a second sweep deletes nothing.
      expect(await sweep()).to.deep.include({ deleted: 0, batches: 0 });
    });

    it('idempotency keys are forgotten after their window', async () => {
      const id = randomUUID();
      await store.insert({ id, analytic: 'kamcheck', input: {} }, { idempotencyKey: { owner: 'u', key: 'k', since: 0 } });
      expect((await store.jobOfIdempotencyKey({ owner: 'u', key: 'k', since: 0 }))!.id).to.equal(id);
      // Past its window a key names nothing, and a new submission takes it over.
      const later = Date.now() + 1000;
      expect(await store.jobOfIdempotencyKey({ owner: 'u', key: 'k', since: later })).to.equal(null);
      const next = randomUUID();
      await store.insert({ id: next, analytic: 'kamcheck', input: {} }, { idempotencyKey: { owner: 'u', key: 'k', since: later } });
      expect((await store.jobOfIdempotencyKey({ owner: 'u', key: 'k', since: 0 }))!.id).to.equal(next);
      // Within its window it is refused, and the job is not written.
      const refused = await rejection(store.insert({ id: randomUUID(), analytic: 'kamcheck', input: {} }, { idempotencyKey: { owner: 'u', key: 'k', since: 0 } }));
      expect(refused).to.be.instanceOf(DuplicateSubmissionError);
      expect((refused as DuplicateSubmissionError).jobId).to.equal(next);
      expect(await store.recent('kamcheck', 10)).to.have.length(2);
      expect(await store.forgetIdempotencyKeys(Date.now() - DAY_MS)).to.equal(0);
      expect(await store.forgetIdempotencyKeys(Date.now() + 1)).to.equal(1);
      expect(await store.jobOfIdempotencyKey({ owner: 'u', key: 'k', since: 0 })).to.equal(null);
    });

    it('publishes a run\'s results only with an outcome the database accepts', async () => {
      await store.insert({ id: 'p', analytic: 'face_log', input: {} });
      const first = (await store.claim('node-1', 50))!;
      await sleep(200);
      const second = (await store.claim('node-2', LONG_LEASE_MS))!;
      expect(second.attempts).to.equal(2);
      const published: string[] = [];
      // The attempt that lost its lease: refused, and nothing of its results is published.
      expect(await store.complete(claimOf(first), 'late', {}, { publish: () => void published.push('first') })).to.equal(false);
      expect(published).to.deep.equal([]);
      // A publish that fails leaves the job unfinished, for the attempt to write its outcome again.
      const err = await rejection(store.complete(claimOf(second), 'ok', {}, { publish: () => {
        throw new Error('rename failed');
      } }));
      expect(err.message).to.equal('rename failed');
      expect((await store.get('p'))!.state).to.equal('processing');
      expect(await store.complete(claimOf(second), 'ok', {}, { publish: () => void published.push('second') })).to.equal(true);
      expect(published).to.deep.equal(['second']);
      expect((await store.get('p'))!.state).to.equal('done');
    });
  });

  describe('over HTTP', () => {
    let media: TestMedia;
    let svc: TestService;
    before(() => {
      media = testMedia();
    });
    afterEach(async () => {
      await svc?.stop();
    });

    it('Idempotency-Key: the same key and user within 24 h answer the first task and create nothing', async () => {
      svc = await startTestService({ ...(await backend.env()), WORKERS: '0', AUTH_CREDENTIALS: `${USER}:${PASSWORD},other:another long password` });
      const post = (analytic: string, key: string, auth = AUTH) =>
        api(`${svc.url}/${analytic}`, { method: 'POST', headers: { 'Idempotency-Key': key, authorization: auth }, auth, body: form({ video: media.clip, image: media.reference }) });
      const first = await post('kamcheck', 'upload-1');
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
      const again = await post('kamcheck', 'upload-1');
      expect(again.status).to.equal(200);
      expect(again.body.task.job_id).to.equal(first.body.task.job_id);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      // Two sent at once with a new key: one job.
      const racing = await Promise.all([post('kamcheck', 'upload-2'), post('kamcheck', 'upload-2')]);
      expect(racing[0].body.task.job_id).to.equal(racing[1].body.task.job_id);
      // Another user's key of the same text is another key.
      const other = await post('kamcheck', 'upload-1', 'Basic ' + Buffer.from('other:another long password').toString('base64'));
      expect(other.body.task.job_id).to.not.equal(first.body.task.job_id);
      expect((await api(`${svc.url}/kamcheck`)).body.tasks).to.have.length(3);
      // A key used for a tamper check is no face log's.
      const reused = await api(`${svc.url}/face_log`, { method: 'POST', headers: { 'Idempotency-Key': 'upload-1' }, body: form({ video: media.clip }) });
      expect(reused.status).to.equal(422);
      expect(reused.body.error.code).to.equal('idempotency_key_reused');
      const bad = await post('kamcheck', 'x'.repeat(300));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.message).to.match(/Idempotency-Key/);
      expect((await api(`${svc.url}/kamcheck`)).body.tasks).to.have.length(3);
    });

    it('a camera check refused after its upload (queue filled meanwhile) keeps neither the job nor its reference', async () => {
      svc = await startTestService({ ...(await backend.env()), WORKERS: '0', QUEUE_LIMIT: '1' });
      // The check's upload starts while the queue has room...
      const request = new Request(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }, { camera: 'door-7' }) });
      const body = Buffer.from(await request.arrayBuffer());
      const head = httpRequest('POST', '/kamcheck', [
        ['Host', 'appliance'],
        ['Authorization', AUTH],
        ['Content-Type', request.headers.get('content-type')!],
        ['Content-Length', body.length],
      ]);
      const { socket, response } = rawConnect(svc.url);
      socket.write(Buffer.concat([head, body.subarray(0, 1000)]));
      await sleep(300);
      // ...another fills it before the rest arrives.
      const other = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      expect(other.status).to.equal(200);
      socket.write(body.subarray(1000));
      const res = await response;
      socket.destroy();
      checkRaw(Buffer.concat([head, body]), res);
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('busy');
      expect((await api(`${svc.url}/cameras/door-7`)).status).to.equal(404);
      const references = path.join(svc.dataDir, 'references');
      const files = fs.existsSync(references) ? fs.readdirSync(references, { recursive: true }).filter((f) => String(f).includes('.')) : [];
      expect(files).to.deep.equal([]);
      expect((await api(`${svc.url}/kamcheck`)).body.tasks).to.have.length(1);
    });

    it('a second node started with a NODE_ID in use refuses to start, naming the clash', async () => {
      const env = await backend.env();
      if (backend.name === 'postgres') {
        svc = await startTestService({ ...env, NODE_ID: 'node-a', WORKERS: '0' });
        const err = await rejection(startTestService({ ...env, NODE_ID: 'node-a', WORKERS: '0' }));
        expect(err.message).to.equal('NODE_ID "node-a" is in use by another running node of this service (it holds the name\'s lock in the database): give each node a NODE_ID of its own');
        const b = await startTestService({ ...env, NODE_ID: 'node-b', WORKERS: '0' });
        await b.stop();
        await svc.stop();
        svc = await startTestService({ ...env, NODE_ID: 'node-a', WORKERS: '0' });
      } else {
        // One box: a second process on the same DATA_DIR.
        const dataDir = tempDataDir();
        const first = await spawnService({ DATA_DIR: dataDir, AUTH_CREDENTIALS: `${USER}:${PASSWORD}`, WORKERS: '0' });
        try {
          const err = await rejection(startTestService({ WORKERS: '0' }, dataDir));
          expect(err.message).to.match(new RegExp(`^the database .*appliance\\.sqlite is in use by another running service \\(pid ${first.child.pid}, node "`));
        } finally {
          first.child.kill('SIGTERM');
          await first.exited;
        }
        svc = await startTestService({ WORKERS: '0' }, dataDir);
        expect((await api(`${svc.url}/healthz`)).status).to.equal(200);
        await svc.stop();
        svc = undefined as unknown as TestService;
        removeTempDir(dataDir);
      }
    });
  });
});
