// A fixed-size pool of analytics worker processes. A worker that crashes or overruns its time
// limit fails only the job it was running, and is replaced.
//
// Memory: each busy worker's resident memory is read every second (/proc/<pid>/status). Past the
// bound (WORKER_MEMORY_MB) its job is asked to stop, which it does at its next progress report,
// between frames, with `memory_limit`; the worker is then replaced. A worker is also replaced after
// WORKER_MAX_JOBS jobs, and when its memory, a moment after a job (its garbage collected), stays
// above WORKER_IDLE_MEMORY_MB: whatever a job leaves behind does not pile up. The kernel is told to
// prefer a worker to the service when memory runs out (oom_score_adj), so the service outlives it.
import type { FramesProgress } from './analytic.js';
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { AnalyticCrashError, JobTimeoutError, MemoryLimitError, WorkerCrashedError } from './errors.js';
import { AnalyticError } from '../errors.js';
import { procStatus } from '../proc-stats.js';
import type { AnalyticOutcome } from './analytic.js';
import type { WorkerCancel, WorkerReply, WorkerRequest } from './worker-protocol.js';

/** The worker's entry script: lib/worker.ts, which serves the service's analytics. */
export const DEFAULT_WORKER_SCRIPT = fileURLToPath(new URL('../worker.js', import.meta.url));

/**
 * Workers run at a lower CPU priority than the HTTP process: with one worker per core they keep
 * every core busy, and the API must still answer at once (GET p99 under load, bench-kamcheck-service).
 */
const WORKER_NICENESS = 10;

/**
 * How long a cancelled job may take to stop before its worker is killed. The face log reports
 * progress every second of its frame loop and finishes its output in a few seconds.
 */
const CANCEL_GRACE_MS = 10_000;

/**
 * glibc's allocator settings for the workers (unless the environment sets them): big blocks such
 * as decoded frames come from the heap, and up to 64 MB freed at its top stay mapped for the next
 * job. glibc otherwise hands memory back as soon as a job's frames are freed, and the next job's
 * frames fault in fresh pages: on the appliance's VM that cost more CPU than decoding them (a 720p
 * tamper check: 143 ms of CPU with these settings, 172 ms without, in the same run; a check that
 * keeps 9 full frames for a reference refresh: 151 against 277 ms). 32 MB is glibc's largest mmap
 * threshold (an 8K BGR frame is 100 MB and is still mapped on its own).
 */
export const WORKER_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: String(32 * 1024 * 1024), MALLOC_TRIM_THRESHOLD_: String(64 * 1024 * 1024) };

/**
 * V8 flags of a worker. `--expose-gc`: gc() for the collections after each job
 * (jobs/worker-process.ts) and between frames (video/frame-garbage.ts). `--max-semi-space-size`
 * (MB): with a young-generation collection before each frame, little is young for long, yet V8
 * kept doubling the young generation it reserves (a 2-minute 720p face log: 16 MiB, then 32 by
 * frame 2000, under 1 MiB of it in use; after a 10-minute 1080p one V8's heap held 83 MiB for 16
 * in use), and its touched pages stayed resident. Capped at 1 MiB, the 2-minute job's worker took
 * no more CPU (22.5 s against 23.5 s, one run each). `--no-concurrent-array-buffer-sweeping`: a
 * collection frees the memory of dead ArrayBuffers (frames among them) before it returns, not
 * later on a helper thread, so that the release of free memory after it (worker-process.ts)
 * finds it free. With the machine busy, the helper thread had not freed them yet: 276 and 302 of
 * 302 MiB stayed resident in test/76's probe, against 62-63 with this flag. The 2-minute job's
 * worker CPU over its ffmpeg children's, with it: 1.23-1.30 (three runs), without: 1.27-1.29 (two).
 */
export const WORKER_V8_FLAGS = ['--expose-gc', '--max-semi-space-size=1', '--no-concurrent-array-buffer-sweeping'];

/** A worker that dies before reporting ready this many times in a row stops the pool from respawning. */
const MAX_FAILED_STARTS = 5;

/** How often a busy worker's memory is read. */
const MEMORY_SAMPLE_MS = 1000;
/** How long after a job its worker's memory is read: the worker's deferred garbage collection (worker-process.ts) has run. */
const AFTER_JOB_SAMPLE_MS = 2500;
/** The workers' oom_score_adj (the service's is 0): the kernel's out-of-memory killer picks a worker first. */
const WORKER_OOM_SCORE_ADJ = 500;

/** Why a worker was replaced while it was well. */
export type RetireReason = 'memory_limit' | 'memory_after_job' | 'max_jobs';

export interface WorkerMemoryBounds {
  /** A busy worker past this stops its job with memory_limit, bytes. */
  limitBytes: number;
  /** A worker still past this a moment after a job is replaced, bytes. */
  idleBytes: number;
  /** Jobs after which a worker is replaced. */
  maxJobs: number;
}

export interface WorkerPoolOptions {
  size: number;
  logger: Logger;
  /** The worker's entry script (tests pass a misbehaving one). */
  script?: string;
  /** No bounds: a worker is replaced only when it crashes or overruns. */
  memory?: WorkerMemoryBounds;
}

/** A worker's resident memory; 0 off Linux (no bound applies) or once it is gone. */
const residentBytes = (pid: number) => procStatus(pid, 'VmRSS');

export interface RunOptions {
  timeoutMs: number;
  onProgress?: (message: string, frames?: FramesProgress) => void;
  /** The job's logger (a child with its job_id); the pool's logger when absent. */
  logger?: Logger;
}

interface Task {
  request: WorkerRequest;
  options: RunOptions;
  resolve: (outcome: AnalyticOutcome) => void;
  reject: (err: Error) => void;
  /** Why the job is being stopped (cancel()); the job fails with this error whatever the worker says. */
  cancelled?: Error & { code: string };
}

interface Worker {
  child: ChildProcess;
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  /** Kills the worker if a cancelled job does not stop in time. */
  cancelTimer: NodeJS.Timeout | null;
  /** Jobs it finished (any outcome). */
  jobs: number;
  /** Set when it is to be replaced as soon as it has no job; it is handed none from then. */
  retire: RetireReason | null;
  /** It was asked to exit (retired): its exit is no crash. */
  retiring: boolean;
  /** The largest resident memory seen during its current job, bytes. */
  peakBytes: number;
}

export class WorkerPool {
  private readonly workers = new Set<Worker>();
  private readonly waiting: Task[] = [];
  private stopping = false;
  private failedStarts = 0;
  /** Workers replaced after a crash or timeout, since start. */
  restarts = 0;
  /** Well workers replaced, by why, since start. */
  readonly retired: Record<RetireReason, number> = { memory_limit: 0, memory_after_job: 0, max_jobs: 0 };
  private memoryWatch: NodeJS.Timeout | null = null;

  constructor(private readonly options: WorkerPoolOptions) {}

  start(): void {
    for (let i = 0; i < this.options.size; i++) this.spawn();
    if (this.options.memory) {
      this.memoryWatch = setInterval(() => this.watchMemory(), MEMORY_SAMPLE_MS);
      this.memoryWatch.unref();
    }
  }

  get pids(): number[] {
    return [...this.workers].map((w) => w.child.pid!).filter(Boolean);
  }

  /** Worker processes that have loaded and said they are ready for a task. */
  get ready(): number {
    return [...this.workers].filter((w) => w.ready).length;
  }

  /** Worker processes running now (starting or ready). */
  get alive(): number {
    return [...this.workers].filter((w) => w.child.exitCode === null && w.child.signalCode === null).length;
  }

  run(request: Omit<WorkerRequest, 'type'>, options: RunOptions): Promise<AnalyticOutcome> {
    return new Promise((resolve, reject) => {
      // Retryable: the queue puts the job back for another node or this one's next start.
      if (this.stopping) return reject(new WorkerCrashedError('the service is stopping'));
      this.waiting.push({ request: { type: 'run', ...request }, options, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Stops a job: a waiting one is rejected with `reason` at once; a running one is asked to stop
   * (its analytic cleans up on the way out) and rejected with `reason` when it does, or when its
   * worker is killed after CANCEL_GRACE_MS. A job that completes meanwhile still resolves.
   */
  cancel(jobId: string, reason: Error & { code: string }, graceMs = CANCEL_GRACE_MS): void {
    const waiting = this.waiting.findIndex((t) => t.request.jobId === jobId);
    if (waiting >= 0) {
      this.waiting.splice(waiting, 1)[0].reject(reason);
      return;
    }
    const worker = [...this.workers].find((w) => w.task?.request.jobId === jobId);
    if (!worker || worker.task!.cancelled) return;
    worker.task!.cancelled = reason;
    const request: WorkerCancel = { type: 'cancel', jobId, code: reason.code, message: reason.message };
    if (worker.child.connected) worker.child.send(request); // else it is exiting: onExit rejects with `reason`
    worker.cancelTimer = setTimeout(() => {
      if (worker.task?.request.jobId !== jobId) return;
      this.jobLogger(worker.task).warn({ pid: worker.child.pid }, 'cancelled job did not stop; killing its worker');
      worker.ready = false; // never hand it another task: it is being killed
      worker.child.kill('SIGKILL'); // onExit rejects the task with `reason` and replaces the worker
    }, graceMs);
  }

  /**
   * Kills every worker. Running tasks, and tasks still waiting for a worker, are rejected with
   * WorkerCrashedError: retryable, so the queue puts their jobs back rather than failing them.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.memoryWatch) clearInterval(this.memoryWatch);
    for (const task of this.waiting.splice(0)) task.reject(new WorkerCrashedError('the service is stopping'));
    const exits = [...this.workers].map(
      (w) =>
        new Promise<void>((done) => {
          if (w.child.exitCode !== null || w.child.signalCode !== null) return done();
          w.child.once('exit', () => done());
          w.child.kill('SIGKILL');
        }),
    );
    await Promise.all(exits);
  }

  private spawn(): void {
    if (this.stopping) return;
    const child = fork(this.options.script ?? DEFAULT_WORKER_SCRIPT, [], {
      execArgv: [...process.execArgv, ...WORKER_V8_FLAGS],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { ...WORKER_MALLOC_ENV, ...process.env },
    });
    try {
      if (child.pid) os.setPriority(child.pid, Math.min(19, os.getPriority() + WORKER_NICENESS));
    } catch (err) {
      this.options.logger.warn({ err }, 'could not lower the priority of a worker process');
    }
    try {
      if (child.pid) fs.writeFileSync(`/proc/${child.pid}/oom_score_adj`, String(WORKER_OOM_SCORE_ADJ));
    } catch {
      // not Linux, or not allowed: the kernel chooses by size alone
    }
    const worker: Worker = { child, ready: false, task: null, timer: null, cancelTimer: null, jobs: 0, retire: null, retiring: false, peakBytes: 0 };
    this.workers.add(worker);
    child.on('message', (reply: WorkerReply) => this.onReply(worker, reply));
    child.on('error', (err) => this.options.logger.error({ err, pid: child.pid }, 'worker process error'));
    child.on('exit', (code, signal) => this.onExit(worker, code, signal));
  }

  private dispatch(): void {
    for (const worker of this.workers) {
      if (this.waiting.length === 0) return;
      if (!worker.ready || worker.task) continue;
      const task = this.waiting.shift()!;
      worker.task = task;
      worker.peakBytes = 0;
      worker.timer = setTimeout(() => this.onTimeout(worker), task.options.timeoutMs);
      worker.child.send(task.request);
    }
  }

  private onReply(worker: Worker, reply: WorkerReply): void {
    if (reply.type === 'log') {
      this.relayLog(worker, reply.record);
      return;
    }
    if (reply.type === 'ready') {
      worker.ready = true;
      this.failedStarts = 0;
      this.dispatch();
      return;
    }
    const task = worker.task;
    if (!task || task.request.jobId !== reply.jobId) return;
    if (reply.type === 'progress') {
      task.options.onProgress?.(reply.message, reply.frames);
      return;
    }
    this.release(worker);
    this.afterJob(worker, task);
    if (reply.type === 'done') {
      task.resolve(reply.outcome);
    } else if (task.cancelled) {
      task.reject(task.cancelled);
    } else if (reply.expose) {
      task.reject(new AnalyticError(reply.code, reply.message));
    } else {
      this.jobLogger(task).error(
        { pid: worker.child.pid, code: reply.code, stack: reply.stack },
        `analytic failed unexpectedly: ${reply.message}`,
      );
      task.reject(new AnalyticCrashError(reply.message));
    }
    this.dispatch();
  }

  private onTimeout(worker: Worker): void {
    const task = worker.task;
    if (!task) return;
    this.release(worker);
    worker.ready = false; // never hand it another task: it is being killed
    this.jobLogger(task).warn({ pid: worker.child.pid }, 'job timed out; killing its worker');
    task.reject(new JobTimeoutError(task.options.timeoutMs));
    worker.child.kill('SIGKILL'); // onExit replaces it
  }

  private onExit(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    this.workers.delete(worker);
    const task = worker.task;
    this.release(worker);
    if (this.stopping) {
      task?.reject(new WorkerCrashedError('the service is stopping'));
      return;
    }
    if (worker.retiring) {
      this.spawn();
      return;
    }
    if (worker.retire === 'memory_limit') this.retired.memory_limit++; // killed: its job did not stop in time
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (task?.cancelled) {
      task.reject(task.cancelled);
    } else {
      (task ? this.jobLogger(task) : this.options.logger).error({ pid: worker.child.pid }, `worker process ended (${how})`);
      task?.reject(new WorkerCrashedError(`the analytics worker ended unexpectedly (${how})`));
    }
    if (!worker.ready) this.failedStarts++;
    if (this.failedStarts >= MAX_FAILED_STARTS) {
      this.options.logger.fatal('analytics workers keep failing at start; not respawning');
      for (const t of this.waiting.splice(0)) t.reject(new WorkerCrashedError('analytics workers cannot start'));
      return;
    }
    this.restarts++;
    this.spawn();
  }

  /** Busy workers past the bound are told to stop their job; each job's peak is kept for its log line. */
  private watchMemory(): void {
    const bounds = this.options.memory!;
    for (const worker of this.workers) {
      const task = worker.task;
      if (!task || task.cancelled || !worker.child.pid) continue;
      const rss = residentBytes(worker.child.pid);
      if (rss === 0) continue;
      worker.peakBytes = Math.max(worker.peakBytes, rss);
      if (rss <= bounds.limitBytes || task.cancelled) continue;
      this.jobLogger(task).warn({ pid: worker.child.pid, rss_mib: mib(rss), limit_mib: mib(bounds.limitBytes) }, 'worker past its memory bound; stopping its job');
      worker.retire = 'memory_limit';
      this.cancel(task.request.jobId, new MemoryLimitError(rss, bounds.limitBytes));
    }
  }

  /** A job ended on `worker`: it is replaced now if it must be, or its memory is read once it had time to collect its garbage. */
  private afterJob(worker: Worker, task: Task): void {
    worker.jobs++;
    const bounds = this.options.memory;
    if (!bounds) return;
    if (worker.peakBytes > 0) this.jobLogger(task).debug({ pid: worker.child.pid, peak_rss_mib: mib(worker.peakBytes) }, 'worker memory during the job');
    if (!worker.retire && worker.jobs >= bounds.maxJobs) worker.retire = 'max_jobs';
    if (worker.retire) {
      this.retireNow(worker);
      return;
    }
    const jobs = worker.jobs;
    setTimeout(() => {
      // still idle since that job: another job's memory is that job's business
      if (worker.task || worker.jobs !== jobs || worker.retiring || !worker.child.pid) return;
      const rss = residentBytes(worker.child.pid);
      if (rss <= bounds.idleBytes) return;
      this.options.logger.info({ pid: worker.child.pid, rss_mib: mib(rss), idle_limit_mib: mib(bounds.idleBytes) }, 'worker memory stays high after its job');
      worker.retire = 'memory_after_job';
      this.retireNow(worker);
    }, AFTER_JOB_SAMPLE_MS).unref();
  }

  /** Ends a well worker that has no job, and starts its replacement when it has gone. */
  private retireNow(worker: Worker): void {
    if (worker.retiring || worker.task || this.stopping) return;
    const reason = worker.retire!;
    worker.ready = false; // never hand it another task
    worker.retiring = true;
    this.retired[reason]++;
    this.options.logger.info({ pid: worker.child.pid, reason, jobs: worker.jobs }, 'replacing a worker');
    worker.child.kill('SIGKILL'); // it holds nothing: its job is over
  }

  private jobLogger(task: Task): Logger {
    return task.options.logger ?? this.options.logger.child({ job_id: task.request.jobId });
  }

  /** A worker's log line, written by this process's logger (one stream, one format). */
  private relayLog(worker: Worker, record: Record<string, unknown>): void {
    const { level, msg, time: _time, pid: _pid, hostname: _host, ...fields } = record;
    const label = this.options.logger.levels.labels[Number(level)] ?? 'info';
    const log = this.options.logger[label as 'info'];
    if (typeof log !== 'function') return;
    log.call(this.options.logger, { ...fields, worker_pid: worker.child.pid }, String(msg ?? ''));
  }

  private release(worker: Worker): void {
    if (worker.timer) clearTimeout(worker.timer);
    if (worker.cancelTimer) clearTimeout(worker.cancelTimer);
    worker.timer = null;
    worker.cancelTimer = null;
    worker.task = null;
  }
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
