// The job framework with real worker processes that crash, hang and fail on purpose.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { pino } from 'pino';
import { JobQueue } from '../lib/jobs/queue.js';
import { JobStore } from '../lib/jobs/store.js';
import { WorkerPool } from '../lib/jobs/worker-pool.js';
import { DiskFullError } from '../lib/errors.js';
import { AnalyticRegistry } from '../lib/jobs/analytic.js';
import { loadConfig } from '../lib/config.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';

const SCRIPT = fileURLToPath(new URL('./helpers/scripted-worker.js', import.meta.url));

describe('job queue and worker pool', function () {
  let dir: string;
  let store: JobStore;
  let pool: WorkerPool;
  let queue: JobQueue;

  function setUp(size: number, timeoutMs = 5000) {
    dir = tempDataDir();
    store = new JobStore(path.join(dir, 'jobs.sqlite'));
    const logger = pino({ level: 'silent' });
    pool = new WorkerPool({ size, logger, script: SCRIPT });
    pool.start();
    // The scripted worker's one analytic: its input says what the worker does with it.
    const analytics = new AnalyticRegistry([
      { name: 'test', parseInput: (raw) => raw, timeoutMs: () => timeoutMs, writesResultFiles: false, loadRunner: () => Promise.reject(new Error('runs in the scripted worker')) },
    ]);
    queue = new JobQueue({ store, pool, logger, concurrency: size, limit: 100, maxAttempts: 3, analytics, config: loadConfig({}) });
  }
  afterEach(async () => {
    await queue.stop(100);
    await pool.stop();
    store.close();
    removeTempDir(dir);
  });

  function submit(id: string, input: Record<string, unknown>) {
    queue.submit(store.insert({ id, analytic: 'test', input }));
  }

  it('completes jobs and stores their result', async () => {
    setUp(2);
    submit('a', { behaviour: 'ok' });
    expect(await queue.waitForFinish('a', 5000)).to.equal(true);
    const job = store.get('a')!;
    expect(job.state).to.equal('done');
    expect(job.message).to.equal('fine');
    expect(job.result).to.deep.include({ answer: 42 });
    expect(job.attempts).to.equal(1);
  });

  it('a crashing worker fails only its job, after bounded retries, and is replaced', async () => {
    setUp(2);
    submit('crash', { behaviour: 'crash' });
    submit('fine', { behaviour: 'ok' });
    await queue.waitForFinish('crash', 10_000);
    await queue.waitForFinish('fine', 10_000);
    const crashed = store.get('crash')!;
    expect(crashed.state).to.equal('failed');
    expect(crashed.attempts).to.equal(3);
    expect(crashed.error!.code).to.equal('worker_crashed');
    expect(crashed.message).to.match(/crashed 3 times/);
    expect(store.get('fine')!.state).to.equal('done');
    expect(pool.restarts).to.equal(3);
    // The pool is whole again and keeps working.
    submit('after', { behaviour: 'ok' });
    await queue.waitForFinish('after', 5000);
    expect(store.get('after')!.state).to.equal('done');
    expect(pool.pids).to.have.length(2);
  });

  it('retries a job whose worker crashed once, and it then succeeds', async () => {
    setUp(1);
    const marker = path.join(dir, 'crashed-once');
    submit('flaky', { behaviour: 'crash_once', marker });
    await queue.waitForFinish('flaky', 10_000);
    const job = store.get('flaky')!;
    expect(job.state).to.equal('done');
    expect(job.attempts).to.equal(2);
    expect(fs.existsSync(marker)).to.equal(true);
  });

  it('kills a job that overruns its time limit, fails it, and replaces the worker', async () => {
    setUp(1, 300);
    submit('hang', { behaviour: 'hang' });
    submit('next', { behaviour: 'ok' });
    await queue.waitForFinish('hang', 5000);
    await queue.waitForFinish('next', 5000);
    const job = store.get('hang')!;
    expect(job.state).to.equal('failed');
    expect(job.error!.code).to.equal('job_timeout');
    expect(job.message).to.match(/took too long/);
    expect(store.get('next')!.state).to.equal('done');
  });

  it('fails bad input with its own code and message, bugs with a generic one', async () => {
    setUp(1);
    submit('bad', { behaviour: 'bad_input' });
    submit('bug', { behaviour: 'bug' });
    await queue.waitForFinish('bad', 5000);
    await queue.waitForFinish('bug', 5000);
    expect(store.get('bad')!.error).to.deep.equal({ code: 'decode_failed', message: 'Cannot decode video clip.mp4' });
    expect(store.get('bad')!.attempts).to.equal(1);
    const bug = store.get('bug')!;
    expect(bug.error!.code).to.equal('internal_error');
    expect(bug.message).to.not.contain('undefined');
  });

  it('fails a job whose results met a full disk at once, without retries', async () => {
    setUp(1);
    submit('full', { behaviour: 'disk_full' });
    await queue.waitForFinish('full', 5000);
    const job = store.get('full')!;
    expect(job.state).to.equal('failed');
    expect(job.attempts).to.equal(1);
    expect(job.error).to.deep.equal({ code: 'insufficient_storage', message: 'The disk of the appliance is full' });
    expect(pool.restarts).to.equal(0);
  });

  it('stops a job on request with the reason given, killing a worker that does not stop in time', async () => {
    setUp(1);
    submit('stuck', { behaviour: 'hang_after_progress' });
    submit('next', { behaviour: 'ok' });
    for (let i = 0; i < 100 && store.get('stuck')!.message !== 'Processing frame 1 of 2'; i++) await new Promise((r) => setTimeout(r, 50));
    pool.cancel('stuck', new DiskFullError('the disk is full'), 300);
    await queue.waitForFinish('stuck', 5000);
    const job = store.get('stuck')!;
    expect(job.state).to.equal('failed');
    expect(job.attempts).to.equal(1);
    expect(job.error).to.deep.equal({ code: 'insufficient_storage', message: 'The disk is full' });
    // Killed after the grace, replaced, and the next job runs.
    await queue.waitForFinish('next', 5000);
    expect(store.get('next')!.state).to.equal('done');
    expect(pool.restarts).to.equal(1);
  });

  it('resumes unfinished jobs found in the store, and gives up on ones interrupted too often', async () => {
    setUp(1);
    store.insert({ id: 'left', analytic: 'test', input: { behaviour: 'ok' } });
    store.insert({ id: 'worn', analytic: 'test', input: { behaviour: 'ok' } });
    for (let i = 0; i < 3; i++) store.markProcessing('worn', 'Processing');
    expect(queue.resume()).to.equal(2);
    await queue.waitForFinish('left', 5000);
    await queue.waitForFinish('worn', 5000);
    expect(store.get('left')!.state).to.equal('done');
    const worn = store.get('worn')!;
    expect(worn.state).to.equal('failed');
    expect(worn.message).to.match(/interrupted 3 times/);
  });
});
