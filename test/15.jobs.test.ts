// The job framework with real worker processes that crash, hang and fail on purpose.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { pino } from 'pino';
import { JobQueue } from '../lib/jobs/queue.js';
import type { JobStore } from '../lib/jobs/store.js';
import { WorkerPool } from '../lib/jobs/worker-pool.js';
import { DiskFullError } from '../lib/errors.js';
import { AnalyticRegistry } from '../lib/jobs/analytic.js';
import { loadConfig } from '../lib/config.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { sleep, until } from './helpers/until.js';

const SCRIPT = fileURLToPath(new URL('./helpers/scripted-worker.js', import.meta.url));

describeBackends('job queue and worker pool', function (backend) {
  let dir: string;
  let stores: TestStores;
  let store: JobStore;
  let pool: WorkerPool;
  let queue: JobQueue;

  /** `concurrency` above `size` claims jobs that then wait in the pool for a free worker. */
  async function setUp(size: number, timeoutMs = 5000, start = true, concurrency = size) {
    dir = tempDataDir();
    stores = await backend.openStores(dir);
    store = stores.jobs;
    const logger = pino({ level: 'silent' });
    pool = new WorkerPool({ size, logger, script: SCRIPT });
    pool.start();
    // The scripted worker's one analytic: its input says what the worker does with it.
    const analytics = new AnalyticRegistry([
      { name: 'test', parseInput: (raw) => raw, timeoutMs: () => timeoutMs, writesResultFiles: false, loadRunner: () => Promise.reject(new Error('runs in the scripted worker')) },
    ]);
    queue = new JobQueue({ store, pool, logger, nodeId: 'test-node', concurrency, limit: 100, maxAttempts: 3, leaseMs: 30_000, analytics, config: loadConfig({}) });
    if (start) await queue.start();
  }
  afterEach(async () => {
    await queue.stop(100);
    await pool.stop();
    await queue.settled(2000);
    await stores.close();
    removeTempDir(dir);
  });

  async function submit(id: string, input: Record<string, unknown>) {
    await store.insert({ id, analytic: 'test', input });
  }

  async function job(id: string) {
    return (await store.get(id))!;
  }

  it('completes jobs and stores their result', async () => {
    await setUp(2);
    await submit('a', { behaviour: 'ok' });
    expect(await queue.waitForFinish('a', 5000)).to.equal(true);
    const record = await job('a');
    expect(record.state).to.equal('done');
    expect(record.message).to.equal('fine');
    expect(record.result).to.deep.include({ answer: 42 });
    expect(record.attempts).to.equal(1);
  });

  it('a crashing worker fails only its job, after bounded retries, and is replaced', async () => {
    await setUp(2);
    await submit('crash', { behaviour: 'crash' });
    await submit('fine', { behaviour: 'ok' });
    await queue.waitForFinish('crash', 10_000);
    await queue.waitForFinish('fine', 10_000);
    const crashed = await job('crash');
    expect(crashed.state).to.equal('failed');
    expect(crashed.attempts).to.equal(3);
    expect(crashed.error!.code).to.equal('worker_crashed');
    expect(crashed.message).to.match(/crashed 3 times/);
    expect((await job('fine')).state).to.equal('done');
    expect(pool.restarts).to.equal(3);
    // The pool is whole again and keeps working.
    await submit('after', { behaviour: 'ok' });
    await queue.waitForFinish('after', 5000);
    expect((await job('after')).state).to.equal('done');
    expect(pool.pids).to.have.length(2);
  });

  it('retries a job whose worker crashed once, and it then succeeds', async () => {
    await setUp(1);
    const marker = path.join(dir, 'crashed-once');
    await submit('flaky', { behaviour: 'crash_once', marker });
    await queue.waitForFinish('flaky', 10_000);
    const record = await job('flaky');
    expect(record.state).to.equal('done');
    expect(record.attempts).to.equal(2);
    expect(fs.existsSync(marker)).to.equal(true);
  });

  it('kills a job that overruns its time limit, fails it, and replaces the worker', async () => {
    await setUp(1, 300);
    await submit('hang', { behaviour: 'hang' });
    await submit('next', { behaviour: 'ok' });
    await queue.waitForFinish('hang', 5000);
    await queue.waitForFinish('next', 5000);
    const record = await job('hang');
    expect(record.state).to.equal('failed');
    expect(record.error!.code).to.equal('job_timeout');
    expect(record.message).to.match(/took too long/);
    expect((await job('next')).state).to.equal('done');
  });

  it('fails bad input with its own code and message, bugs with a generic one', async () => {
    await setUp(1);
    await submit('bad', { behaviour: 'bad_input' });
    await submit('bug', { behaviour: 'bug' });
    await queue.waitForFinish('bad', 5000);
    await queue.waitForFinish('bug', 5000);
    expect((await job('bad')).error).to.deep.equal({ code: 'decode_failed', message: 'Cannot decode video clip.mp4' });
    expect((await job('bad')).attempts).to.equal(1);
    const bug = await job('bug');
    expect(bug.error!.code).to.equal('internal_error');
    expect(bug.message).to.not.contain('undefined');
  });

  it('fails a job whose results met a full disk at once, without retries', async () => {
    await setUp(1);
    await submit('full', { behaviour: 'disk_full' });
    await queue.waitForFinish('full', 5000);
    const record = await job('full');
    expect(record.state).to.equal('failed');
    expect(record.attempts).to.equal(1);
    expect(record.error).to.deep.equal({ code: 'insufficient_storage', message: 'The disk of the appliance is full' });
    expect(pool.restarts).to.equal(0);
  });

  it('stops a job on request with the reason given, killing a worker that does not stop in time', async () => {
    await setUp(1);
    await submit('stuck', { behaviour: 'hang_after_progress' });
    await submit('next', { behaviour: 'ok' });
    for (let i = 0; i < 100 && (await job('stuck')).message !== 'Processing frame 1 of 2'; i++) await sleep(50);
    pool.cancel('stuck', new DiskFullError('the disk is full'), 300);
    await queue.waitForFinish('stuck', 5000);
    const record = await job('stuck');
    expect(record.state).to.equal('failed');
    expect(record.attempts).to.equal(1);
    expect(record.error).to.deep.equal({ code: 'insufficient_storage', message: 'The disk is full' });
    // Killed after the grace, replaced, and the next job runs.
    await queue.waitForFinish('next', 5000);
    expect((await job('next')).state).to.equal('done');
    expect(pool.restarts).to.equal(1);
  });

  it('puts a job still waiting for a worker back in the queue when the node stops, as it does a running one', async () => {
    // One worker, two claims: 'waiting' is handed to the pool while 'stuck' holds its worker.
    await setUp(1, 5000, true, 2);
    await submit('stuck', { behaviour: 'hang_after_progress' });
    await submit('waiting', { behaviour: 'ok' });
    await until('both jobs claimed, the first one running', async () => {
      const [stuck, waiting] = [await job('stuck'), await job('waiting')];
      return stuck.message === 'Processing frame 1 of 2' && waiting.state === 'processing';
    });
    // The service's stop: the queue first, then the pool.
    await queue.stop(100);
    await pool.stop();
    await queue.settled(2000);
    for (const id of ['stuck', 'waiting']) {
      const record = await job(id);
      expect(record, id).to.include({ state: 'queued', attempts: 1, error: null });
      expect(record.message, id).to.equal('Queued (service restarting)');
    }
  });

  it('resumes unfinished jobs found in the store, and gives up on ones interrupted too often', async () => {
    await setUp(1, 5000, false);
    // A previous run of this node claimed 'worn' three times and died each time.
    await store.insert({ id: 'worn', analytic: 'test', input: { behaviour: 'ok' } });
    for (let i = 0; i < 3; i++) {
      expect((await store.claim('test-node', 30_000))!.id).to.equal('worn');
      await store.releaseLeases('test-node');
    }
    await store.insert({ id: 'left', analytic: 'test', input: { behaviour: 'ok' } });
    expect(await store.unfinishedCount()).to.equal(2);
    // Its lease released at start, 'worn' runs now, not after JOB_LEASE_S.
    const started = Date.now();
    expect(await queue.start()).to.equal(1);
    await queue.waitForFinish('left', 5000);
    await queue.waitForFinish('worn', 5000);
    expect((await job('left')).state).to.equal('done');
    const worn = await job('worn');
    expect(worn.state).to.equal('failed');
    expect(worn.message).to.match(/interrupted 3 times/);
    expect(Date.now() - started).to.be.below(5000);
  });
});
