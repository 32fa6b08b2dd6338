// A tamper check with a reference refresh as a job of the real service: stored with refreshPath,
// run by a worker process of the pool, read back over real HTTP. The camera routes that create
// such jobs are tested with them; this is the worker's side of that contract.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { makeQuietClip, type QuietClip } from '../testkit/quiet-clip.js';
import { readImage } from '../lib/video/decode.js';
import { WORKER_MALLOC_ENV } from '../lib/jobs/worker-pool.js';

describe('kamcheck job with a reference refresh', function () {
  this.timeout(120_000);
  let svc: TestService;
  let quiet: QuietClip;
  let shared: string;

  before(async () => {
    svc = await startTestService({ WORKERS: '1' });
    quiet = makeQuietClip(path.join(svc.dataDir, 'media'), { count: 9, quiet: 3 });
    // the camera's stored reference: read by the job, never touched
    shared = path.join(svc.dataDir, 'cameras', 'lobby-3', 'reference.jpg');
    fs.mkdirSync(path.dirname(shared), { recursive: true });
    fs.copyFileSync(quiet.background, shared);
  });
  after(async () => svc.stop());

  /** A job as the camera route stores it: the clip in the job's folder, the reference shared. */
  async function submit(refreshPath?: string): Promise<string> {
    const id = randomUUID();
    const input = path.join(svc.dataDir, 'jobs', id, 'input');
    fs.mkdirSync(input, { recursive: true });
    fs.copyFileSync(quiet.clip, path.join(input, 'video'));
    await svc.service.jobs.insert({
      id,
      analytic: 'kamcheck',
      input: { videoPath: path.join(input, 'video'), imagePath: shared, videoName: 'clip.mp4', imageName: 'reference.jpg', ...(refreshPath ? { refreshPath } : {}) },
    });
    return id;
  }

  it('writes the refresh before the job is done, keeps the shared reference, and reports as before', async () => {
    const before = fs.readFileSync(shared);
    const refreshPath = path.join(svc.dataDir, 'cameras', 'lobby-3', 'next.jpg');
    const ids = [await submit(refreshPath), await submit()];
    const [withRefresh, without] = await Promise.all(ids.map((id) => waitComplete(`${svc.url}/kamcheck/${id}`)));
    for (const task of [withRefresh, without]) {
      expect(task.success, JSON.stringify(task)).to.equal(true);
      expect(task.probability).to.equal(0);
      expect(task.message).to.equal('Tampering probability 0%');
    }
    // nothing else in the result differs
    const { job_id: _a, start_time: _b, finish_time: _c, ...a } = withRefresh;
    const { job_id: _d, start_time: _e, finish_time: _f, ...b } = without;
    expect(a).to.deep.equal(b);

    const written = readImage(refreshPath);
    expect([written.cols, written.rows]).to.deep.equal([640, 480]);
    expect(fs.readFileSync(shared).equals(before)).to.equal(true);
    expect(fs.readdirSync(path.dirname(shared)).sort()).to.deep.equal(['next.jpg', 'reference.jpg']);
    // the job's own folder goes in the clean-up after its outcome is recorded, which the task can
    // show complete before; the queue's waitForFinish waits for that clean-up too. The shared
    // reference stays.
    for (const id of ids) expect(await svc.service.queue.waitForFinish(id, 10_000), id).to.equal(true);
    expect(fs.readdirSync(path.join(svc.dataDir, 'jobs'))).to.deep.equal([]);
    expect((await api(`${svc.url}/kamcheck/${ids[0]}`)).body.task).to.deep.equal(withRefresh);
  });

  it('starts its workers with the allocator settings that keep freed frames for the next job', () => {
    const [pid] = svc.service.pool.pids;
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    for (const [name, value] of Object.entries(WORKER_MALLOC_ENV)) expect(environ).to.include(`${name}=${value}`);
  });
});
