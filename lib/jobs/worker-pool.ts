// A fixed-size pool of analytics worker processes. A worker that crashes or overruns its time
// limit fails only the job it was running, and is replaced.
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { AnalyticError, JobTimeoutError, WorkerCrashedError } from './errors.js';
import type { AnalyticOutcome } from './runners.js';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

export const DEFAULT_WORKER_SCRIPT = fileURLToPath(new URL('./worker-process.js', import.meta.url));

/**
 * Workers run at a lower CPU priority than the HTTP process: with one worker per core they keep
 * every core busy, and the API must still answer at once (GET p99 under load, bench-kamcheck-service).
 */
const WORKER_NICENESS = 10;

/** A worker that dies before reporting ready this many times in a row stops the pool from respawning. */
const MAX_FAILED_STARTS = 5;

export interface WorkerPoolOptions {
  size: number;
  logger: Logger;
  /** The worker's entry script (tests pass a misbehaving one). */
  script?: string;
}

export interface RunOptions {
  timeoutMs: number;
  onProgress?: (message: string) => void;
  /** The job's logger (a child with its job_id); the pool's logger when absent. */
  logger?: Logger;
}

/** A job failed inside the worker because of a bug (not bad input); details are in the log only. */
export class AnalyticCrashError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'AnalyticCrashError';
    this.code = code;
  }
}

interface Task {
  request: WorkerRequest;
  options: RunOptions;
  resolve: (outcome: AnalyticOutcome) => void;
  reject: (err: Error) => void;
}

interface Worker {
  child: ChildProcess;
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
}

export class WorkerPool {
  private readonly workers = new Set<Worker>();
  private readonly waiting: Task[] = [];
  private stopping = false;
  private failedStarts = 0;
  /** Workers replaced after a crash or timeout, since start. */
  restarts = 0;

  constructor(private readonly options: WorkerPoolOptions) {}

  start(): void {
    for (let i = 0; i < this.options.size; i++) this.spawn();
  }

  get pids(): number[] {
    return [...this.workers].map((w) => w.child.pid!).filter(Boolean);
  }

  /** Worker processes running now (starting or ready). */
  get alive(): number {
    return [...this.workers].filter((w) => w.child.exitCode === null && w.child.signalCode === null).length;
  }

  run(request: Omit<WorkerRequest, 'type'>, options: RunOptions): Promise<AnalyticOutcome> {
    return new Promise((resolve, reject) => {
      if (this.stopping) return reject(new Error('worker pool is stopping'));
      this.waiting.push({ request: { type: 'run', ...request }, options, resolve, reject });
      this.dispatch();
    });
  }

  /** Kills every worker; running tasks are rejected with WorkerCrashedError. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const task of this.waiting.splice(0)) task.reject(new Error('worker pool stopped'));
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
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    try {
      if (child.pid) os.setPriority(child.pid, Math.min(19, os.getPriority() + WORKER_NICENESS));
    } catch (err) {
      this.options.logger.warn({ err }, 'could not lower the priority of a worker process');
    }
    const worker: Worker = { child, ready: false, task: null, timer: null };
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
      task.options.onProgress?.(reply.message);
      return;
    }
    this.release(worker);
    if (reply.type === 'done') {
      task.resolve({ message: reply.message, result: reply.result });
    } else if (reply.expected) {
      task.reject(new AnalyticError(reply.code, reply.message));
    } else {
      this.jobLogger(task).error(
        { pid: worker.child.pid, code: reply.code, stack: reply.stack },
        `analytic failed unexpectedly: ${reply.message}`,
      );
      task.reject(new AnalyticCrashError(reply.code, reply.message));
    }
    this.dispatch();
  }

  private onTimeout(worker: Worker): void {
    const task = worker.task;
    if (!task) return;
    this.release(worker);
    worker.ready = false; // never hand it another task: it is being killed
    this.jobLogger(task).warn({ pid: worker.child.pid }, 'job timed out; killing its worker');
    task.reject(new JobTimeoutError(`processing took longer than ${Math.round(task.options.timeoutMs / 1000)} s`));
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
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    (task ? this.jobLogger(task) : this.options.logger).error({ pid: worker.child.pid }, `worker process ended (${how})`);
    task?.reject(new WorkerCrashedError(`the analytics worker ended unexpectedly (${how})`));
    if (!worker.ready) this.failedStarts++;
    if (this.failedStarts >= MAX_FAILED_STARTS) {
      this.options.logger.fatal('analytics workers keep failing at start; not respawning');
      for (const t of this.waiting.splice(0)) t.reject(new WorkerCrashedError('analytics workers cannot start'));
      return;
    }
    this.restarts++;
    this.spawn();
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
    worker.timer = null;
    worker.task = null;
  }
}
