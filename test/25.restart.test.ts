// The service as a separate process, killed and restarted: nothing accepted is lost, nothing
// runs twice, and a killed worker costs no job.
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { api, AUTH, form, removeTempDir, spawnService, tempDataDir, waitComplete } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { describeBackends } from './helpers/backends.js';

const JOBS = 8;

describeBackends('restarts and crashes of the service', function (backend) {
  this.timeout(120_000);
  let media: TestMedia;
  before(() => {
    media = testMedia();
  });
  /** Each test's data folder: shared by the service and its restart, removed once both have exited. */
  let dataDir: string | undefined;
  const newDataDir = () => (dataDir = tempDataDir());
  afterEach(() => {
    if (dataDir) removeTempDir(dataDir);
    dataDir = undefined;
  });

  /**
   * The environment of a test's service and of its restarts: one data folder and job store. The
   * restarted process is the same node: with PORT=0 its default name (host:port) would change,
   * and on PostgreSQL the leases of its previous run would then hold until they ran out instead
   * of being released at start.
   */
  const newEnv = async () => ({
    DATA_DIR: newDataDir(),
    WORKERS: '1',
    KAMCHECK_WAIT_MS: '0',
    AUTH_CREDENTIALS: 'tester:correct horse battery staple',
    NODE_ID: 'restarting-node',
    ...(await backend.env()),
  });

  async function submitBurst(url: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const res = await api(`${url}/kamcheck`, { method: 'POST', body: form({ video: media.clipHd, image: media.referenceHd }) });
      expect(res.status).to.equal(200);
      ids.push(res.body.task.job_id);
    }
    return ids;
  }

  async function expectAllDoneOnce(url: string, ids: string[]): Promise<void> {
    for (const id of ids) {
      const task = await waitComplete(`${url}/kamcheck/${id}`, 60_000);
      expect(task.success, JSON.stringify(task)).to.equal(true);
    }
    const list = await api(`${url}/kamcheck`);
    expect(list.body.tasks.map((t: any) => t.job_id).sort()).to.deep.equal([...ids].sort());
  }

  it('kill -9 during processing: after a restart every accepted job completes, once', async () => {
    const env = await newEnv();
    const first = await spawnService(env);
    const ids = await submitBurst(first.url);
    const states = await Promise.all(ids.map((id) => api(`${first.url}/kamcheck/${id}`)));
    expect(states.some((s) => !s.body.task.complete), 'some jobs still running when killed').to.equal(true);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnService(env);
    try {
      // The process runs on the backend under test, as the same node.
      expect((await api(`${second.url}/healthz`)).body.health.node).to.deep.equal({ id: 'restarting-node', backend: backend.name });
      await expectAllDoneOnce(second.url, ids);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  if (backend.name === 'postgres') {
    it('kill -9 of a node: a node of another name finishes its jobs, the one it was running once its lease ran out', async () => {
      // Short leases: the dead node's hold on its running job lapses in 2 s; nobody releases it.
      const env = { ...(await newEnv()), JOB_LEASE_S: '2' };
      const first = await spawnService({ ...env, NODE_ID: 'node-a' });
      const ids = await submitBurst(first.url);
      // Running: claimed and not finished. Its message moves on from "Processing" to the
      // analytic's own steps ("Decoding", "Analysing 25 frames") within milliseconds, and
      // between two jobs none runs for a moment: look until one does.
      const running = (task: any) => !task.complete && !/^Queued/.test(task.message);
      let tasks: any[] = [];
      for (const until = Date.now() + 10_000; Date.now() < until && !tasks.some(running); ) {
        tasks = (await Promise.all(ids.map((id) => api(`${first.url}/kamcheck/${id}`)))).map((r) => r.body.task);
      }
      expect(tasks.some(running), `a job running when killed: ${tasks.map((t) => t.message).join(', ')}`).to.equal(true);
      first.child.kill('SIGKILL');
      await first.exited;

      const other = await spawnService({ ...env, NODE_ID: 'node-b' });
      try {
        await expectAllDoneOnce(other.url, ids);
      } finally {
        other.child.kill('SIGTERM');
        expect(await other.exited).to.equal(0);
      }
    });
  }

  it('SIGTERM stops gracefully (exit 0) and the next start finishes what was queued', async () => {
    const env = await newEnv();
    const first = await spawnService(env);
    const ids = await submitBurst(first.url);
    first.child.kill('SIGTERM');
    expect(await first.exited).to.equal(0);

    const second = await spawnService(env);
    try {
      await expectAllDoneOnce(second.url, ids);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    }
  });

  it('a killed worker process costs no job: its job runs again on a new worker', async () => {
    const svc = await spawnService(await newEnv());
    try {
      const ids = await submitBurst(svc.url);
      const workers = () =>
        execFileSync('pgrep', ['-P', String(svc.child.pid)]).toString().trim().split('\n').filter(Boolean);
      const [worker] = workers();
      process.kill(Number(worker), 'SIGKILL');
      await expectAllDoneOnce(svc.url, ids);
      const now = workers();
      expect(now).to.have.length(1);
      expect(now[0]).to.not.equal(worker);
      const health = await api(`${svc.url}/kamcheck`, { headers: { authorization: AUTH } });
      expect(health.status).to.equal(200);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  });
});
