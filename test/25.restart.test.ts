// The service as a separate process, killed and restarted: nothing accepted is lost, nothing
// runs twice, and a killed worker costs no job.
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { api, AUTH, form, removeTempDir, spawnService, tempDataDir, waitComplete } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';

const JOBS = 8;

describe('restarts and crashes of the service', function () {
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

  const env = (dataDir: string) => ({
    DATA_DIR: dataDir,
    WORKERS: '1',
    KAMCHECK_WAIT_MS: '0',
    AUTH_CREDENTIALS: 'tester:correct horse battery staple',
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
    const dataDir = newDataDir();
    const first = await spawnService(env(dataDir));
    const ids = await submitBurst(first.url);
    const states = await Promise.all(ids.map((id) => api(`${first.url}/kamcheck/${id}`)));
    expect(states.some((s) => !s.body.task.complete), 'some jobs still running when killed').to.equal(true);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnService(env(dataDir));
    try {
      await expectAllDoneOnce(second.url, ids);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('SIGTERM stops gracefully (exit 0) and the next start finishes what was queued', async () => {
    const dataDir = newDataDir();
    const first = await spawnService(env(dataDir));
    const ids = await submitBurst(first.url);
    first.child.kill('SIGTERM');
    expect(await first.exited).to.equal(0);

    const second = await spawnService(env(dataDir));
    try {
      await expectAllDoneOnce(second.url, ids);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    }
  });

  it('a killed worker process costs no job: its job runs again on a new worker', async () => {
    const dataDir = newDataDir();
    const svc = await spawnService(env(dataDir));
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
