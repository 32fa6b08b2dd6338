// An analytics worker: a child process (entry lib/worker.ts) that runs one job at a time for the
// pool in the main process, talking over the IPC channel. OpenCV lives only here.
import type { FramesProgress } from './analytic.js';
import { pino } from 'pino';
import type { AnalyticRegistry } from './analytic.js';
import { AnalyticError, describeError } from '../errors.js';
import { diskFullError } from '../disk-space.js';
import { releaseFreeMemory } from './free-memory.js';
import type { WorkerCancel, WorkerReply, WorkerRequest } from './worker-protocol.js';

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

// Log records go over the IPC channel to the pool, which writes them with the service's logger:
// one stream of JSON lines, and tests capture a worker's lines like any other.
const logger = pino(
  { level: process.env.LOG_LEVEL || 'info', base: null, timestamp: false },
  { write: (line: string) => send({ type: 'log', record: JSON.parse(line) }) },
);

/** The job running now, and why the pool asked to stop it (null: it did not). */
let current: { jobId: string; cancelled: AnalyticError | null } | null = null;

async function runJob(analytics: AnalyticRegistry, request: WorkerRequest): Promise<void> {
  const { jobId, analytic, input } = request;
  const job = (current = { jobId, cancelled: null as AnalyticError | null });
  const log = logger.child({ job_id: jobId });
  const started = Date.now();
  log.debug({ analytic }, 'worker took the job');
  // A cancelled job stops at its next progress report: the analytic's own clean-up runs (the face
  // log kills its encoder and removes its partial results) as for any other error.
  const progress = (message: string, frames?: FramesProgress) => {
    if (job.cancelled) throw job.cancelled;
    send({ type: 'progress', jobId, message, ...(frames ? { frames } : {}) });
  };
  try {
    const descriptor = analytics.get(analytic);
    if (!descriptor) throw new AnalyticError('unknown_analytic', `no analytic named ${analytic}`);
    const run = await descriptor.loadRunner();
    const outcome = await run(descriptor.parseInput(input), progress, log);
    log.debug({ ms: Date.now() - started }, 'worker finished the job');
    send({ type: 'done', jobId, outcome });
  } catch (err) {
    const error = job.cancelled ?? err;
    const full = diskFullError(error);
    // Results that could not be written are a clean failure with a plain message, not a defect.
    if (full) log.warn({ err: error }, 'disk full while writing results');
    const failure = describeError(full ?? error);
    send({
      type: 'failed',
      jobId,
      code: failure.code,
      message: failure.message,
      expose: failure.expose,
      stack: failure.expose ? undefined : (error as Error)?.stack,
    });
  } finally {
    if (current === job) current = null;
    collectGarbage();
  }
}

/**
 * V8 does not know how much memory OpenCV's Mats hold (see video/opencv-setup.ts): a job's
 * garbage Mats would wait for the JS heap to fill, which a few small jobs in a row do not do. A
 * collection after a job frees them now: measured after one face log each, 9 ms and 10 MiB of
 * RSS at 640x480, 18 ms and 133 MiB at 1920x1080.
 *
 * At most one collection a second, though: a full collection costs 13-18 ms of CPU, 10-14% of a
 * 720p tamper check (which releases its big frames itself and leaves about 10 MB of small Mats).
 * A collection put off runs once the worker has had no job for that second, so an idle worker
 * holds no garbage, and then hands the memory glibc keeps free back to the kernel.
 */
const MIN_COLLECTION_INTERVAL_MS = 1000;
let lastCollection = 0;
let deferredCollection: NodeJS.Timeout | null = null;

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return;
  if (deferredCollection) clearTimeout(deferredCollection);
  const collected = Date.now() - lastCollection >= MIN_COLLECTION_INTERVAL_MS;
  if (collected) {
    collect(gc);
    releaseFree(false);
  }
  // Once the worker has had no job for a second: the collection put off, if it was, and the
  // release of free memory that an idle worker always makes.
  deferredCollection = setTimeout(() => {
    deferredCollection = null;
    if (current) return; // the job that is running now collects when it ends
    if (!collected) collect(gc);
    releaseFree(true);
  }, MIN_COLLECTION_INTERVAL_MS);
  deferredCollection.unref();
}

/**
 * How often a busy worker hands free memory back after its collection (free-memory.ts); an idle
 * worker always does. After every job it cost a burst of 1080p tamper checks 42% of its rate (3.55
 * against 6.11 checks a second): each check faulted its frames' pages in afresh.
 */
const RELEASE_INTERVAL_MS = 30_000;
let lastRelease = 0;
let releaseFailed = false;

function collect(gc: () => void): void {
  gc();
  lastCollection = Date.now();
}

function releaseFree(idle: boolean): void {
  if (!idle && Date.now() - lastRelease < RELEASE_INTERVAL_MS) return;
  lastRelease = Date.now();
  try {
    releaseFreeMemory();
  } catch (err) {
    if (!releaseFailed) logger.warn({ err }, 'cannot hand freed memory back to the system');
    releaseFailed = true;
  }
}

function cancel(request: WorkerCancel): void {
  if (current?.jobId !== request.jobId) return;
  current.cancelled = new AnalyticError(request.code, request.message);
}

/** Serves the pool: runs the jobs it sends with the given analytics, one at a time. */
export function serveJobs(analytics: AnalyticRegistry): void {
  process.on('message', (request: WorkerRequest | WorkerCancel) => {
    if (request?.type === 'run') void runJob(analytics, request);
    else if (request?.type === 'cancel') cancel(request);
  });
  // The pool is gone (service stopped or crashed): nothing left to work for.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}
