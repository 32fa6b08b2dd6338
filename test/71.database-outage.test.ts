// PostgreSQL going away under a running node: requests that need the database answer 503
// `busy` with Retry-After (never a 500) and leave nothing behind; the node reconnects on its own
// when the database is back; a job that finished during the outage is recorded once, afterwards.
import fs from 'node:fs';
import { expect } from 'chai';
import { api, form, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';
import { until } from './helpers/until.js';


describe('job database outage (postgres)', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let pg: PrivatePostgres;
  let svc: TestService;

  before(async () => {
    media = testMedia();
    pg = await startPostgres();
    svc = await startTestService({ DATABASE_URL: pg.url, KAMCHECK_WAIT_MS: '0', WORKERS: '1', NODE_ID: 'outage-node' });
  });
  after(async () => {
    await pg?.start().catch(() => {}); // a failed test may leave it down; stop() needs it up
    await svc?.stop();
    await pg?.stop();
  });

  const post = () => api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clipHd, image: media.referenceHd }) });

  it('answers 503 busy while the database is down, reconnects, and records a job that ran through the outage once', async () => {
    const before = await post();
    expect(before.status).to.equal(200);
    expect((await waitComplete(`${svc.url}/kamcheck/${before.body.task.job_id}`, 60_000)).success).to.equal(true);

    // A job that is running when the database goes away.
    const running = await post();
    expect(running.status).to.equal(200);
    const runningId = running.body.task.job_id;
    await until('the job to start', async () => (await api(`${svc.url}/kamcheck/${runningId}`)).body.task.message !== 'Queued', 30_000);
    // The worker is held while the database goes, so the check cannot finish before it is gone.
    const workers = svc.service.pool.pids;
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    await pg.kill();
    for (const pid of workers) process.kill(pid, 'SIGCONT');

    for (const res of [await post(), await api(`${svc.url}/kamcheck/${runningId}`), await api(`${svc.url}/kamcheck`), await api(`${svc.url}/face_log/1/10`)]) {
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('busy');
      expect(Number(res.headers.get('retry-after'))).to.be.above(0);
    }
    const health = await api(`${svc.url}/healthz`);
    expect(health.status).to.equal(503);
    expect(health.body.health.database.ok).to.equal(false);
    expect(health.body.health.queue.depth).to.equal(null);
    expect((await api(`${svc.url}/metrics`)).status).to.equal(200);
    // The refused upload left no file behind.
    expect(fs.readdirSync(svc.service.tmpDir)).to.deep.equal([]);
    const jobFolders = fs.readdirSync(`${svc.dataDir}/jobs`);
    expect(jobFolders.filter((id) => id !== runningId)).to.deep.equal([]);

    // The running check finishes while the database is away, and its outcome waits.
    const waitingOutcome = (l: Record<string, unknown>) => l.job_id === runningId && String(l.msg).startsWith('the database does not answer');
    await until('the outcome to wait for the database', async () => svc.logs.some(waitingOutcome), 60_000);
    await pg.start();

    // Without a restart of the node: it reconnects and takes uploads again.
    const after = await until('an upload to be accepted again', async () => {
      const res = await post();
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 503]);
      return res.status === 200 ? res : undefined;
    }, 30_000);
    const done = await waitComplete(`${svc.url}/kamcheck/${runningId}`, 60_000);
    expect(done.success).to.equal(true);
    const record = (await svc.service.jobs.get(runningId))!;
    expect(record.state).to.equal('done');
    expect(record.attempts, 'the outcome was written after the outage, not run again').to.equal(1);
    // 'job done' is logged after the job's clean-up, a moment after the store shows it done.
    await until('the job done line', () => svc.logs.some((l) => l.job_id === runningId && l.msg === 'job done'), 10_000);
    expect(svc.logs.filter((l) => l.job_id === runningId && l.msg === 'job done')).to.have.length(1);
    expect((await waitComplete(`${svc.url}/kamcheck/${after.body.task.job_id}`, 60_000)).success).to.equal(true);
    expect((await api(`${svc.url}/healthz`)).status).to.equal(200);
  });

  it('a restart of the database under a node is invisible to clients that retry', async () => {
    await pg.restart();
    const res = await until('an upload after the restart', async () => {
      const r = await post();
      expect(r.status).to.be.oneOf([200, 503]);
      return r.status === 200 ? r : undefined;
    }, 30_000);
    expect((await waitComplete(`${svc.url}/kamcheck/${res.body.task.job_id}`, 60_000)).success).to.equal(true);
  });
});
