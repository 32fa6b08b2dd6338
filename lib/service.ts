// Wiring of the service: data folders, job store, worker pool, queue and HTTP server. Also the
// graceful stop: no new jobs, running ones finish or go back to the queue for the next start.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import { resolveCredentials, type ResolvedCredentials } from './http/credentials.js';
import { JobQueue } from './jobs/queue.js';
import { JobStore } from './jobs/store.js';
import { WorkerPool } from './jobs/worker-pool.js';
import { PARTIAL_SUFFIX, partialResultsDir, startRetentionSweeper, sweepResults } from './jobs/retention.js';
import { ResultLinks } from './http/result-links.js';
import { analytics, servedAnalytics } from './analytics.js';
import { StorageGuard, type DiskSpaceProbe } from './disk-space.js';
import { ServiceMetrics } from './metrics.js';
import { answerClientError } from './http/client-error.js';

export interface RunningService {
  url: string;
  credentials: ResolvedCredentials;
  store: JobStore;
  pool: WorkerPool;
  queue: JobQueue;
  /** Jobs found unfinished at start and queued again. */
  resumed: number;
  metrics: ServiceMetrics;
  storage: StorageGuard;
  /** Deletes expired result files now (the sweeper also runs hourly); resolves with the folders removed. */
  sweepResults(): Promise<number>;
  stop(graceMs?: number): Promise<void>;
}

/** How long a graceful stop waits for running jobs before re-queueing them. */
const STOP_GRACE_MS = 20_000;

export interface ServiceOptions {
  /** The clock for result retention (tests move it forward). */
  now?: () => number;
  /** Free bytes in DATA_DIR (tests simulate a full disk); statfs by default. */
  diskSpace?: DiskSpaceProbe;
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const now = options.now ?? Date.now;
  const tmpDir = path.join(config.dataDir, 'tmp');
  const jobsDir = path.join(config.dataDir, 'jobs');
  const resultsDir = path.join(config.dataDir, 'results');
  const resultTtlMs = config.resultTtlDays * 24 * 60 * 60 * 1000;
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  fs.rmSync(tmpDir, { recursive: true, force: true }); // uploads cut off by a previous stop
  fs.mkdirSync(tmpDir, { recursive: true });
  fs.mkdirSync(jobsDir, { recursive: true });
  fs.mkdirSync(resultsDir, { recursive: true });
  removePartialResults(resultsDir); // no job runs yet: any `.partial` folder is a left-over

  const credentials = resolveCredentials(config);
  const store = new JobStore(path.join(config.dataDir, 'jobs.sqlite'));
  removeStaleJobFolders(jobsDir, store, logger);

  const pool = new WorkerPool({ size: config.workers, logger });
  pool.start();
  const storage = new StorageGuard(config.dataDir, config.minFreeDiskBytes, options.diskSpace);
  const metrics: ServiceMetrics = new ServiceMetrics({
    analytics: analytics.names,
    jobCounts: () => store.countsByState(),
    queueDepth: (): number => queue.depth,
    queueLimit: config.queueLimit,
    workersAlive: () => pool.alive,
    workerRestarts: () => pool.restarts,
    workerPids: () => pool.pids,
    freeDiskBytes: () => storage.freeBytes(),
  });
  const queue = new JobQueue({
    store,
    pool,
    logger,
    concurrency: config.workers,
    limit: config.queueLimit,
    maxAttempts: config.jobMaxAttempts,
    analytics,
    config,
    onFinished: (id) => removeJobFiles(jobsDir, resultsDir, id),
    storage,
    metrics,
  });
  const resumed = queue.resume();
  if (resumed > 0) logger.info({ resumed }, 'queued again the jobs left unfinished by the last run');

  const retention = { resultsDir, ttlMs: resultTtlMs, store, logger, now };
  const stopSweeper = startRetentionSweeper(retention);
  const links = ResultLinks.fromDataDir(config.dataDir);
  const app = createApp({
    config, store, queue, logger, jobsDir, tmpDir, resultsDir, resultTtlMs, links, now, pool, storage, metrics,
    analytics: servedAnalytics,
    credentials: credentials.credentials,
  });
  // HTTPS when TLS_CERT and TLS_KEY are set: Basic credentials must not cross a network in clear.
  const server = config.tls
    ? https.createServer({ cert: config.tls.cert, key: config.tls.key }, app.callback())
    : http.createServer(app.callback());
  server.on('clientError', answerClientError);
  server.requestTimeout = 0; // large uploads may take long; formidable enforces the size limit
  // Longer than the usual client and proxy idle timeouts, so they close idle sockets first and
  // never send a request on a socket the server is closing.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let stopped: Promise<void> | null = null;
  const stop = (graceMs = STOP_GRACE_MS) =>
    (stopped ??= (async () => {
      stopSweeper();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await queue.stop(graceMs);
      await pool.stop();
      server.closeAllConnections();
      await closed;
      store.close();
    })());

  return { url, credentials, store, pool, queue, resumed, metrics, storage, sweepResults: () => sweepResults(retention), stop };
}

/**
 * A finished job needs its uploads no more (results, if any, live beside them): deleting them
 * keeps the disk from filling with clips. The job's folder goes too when nothing else is in it.
 * Partial results go as well: the face log removes its own when its frame loop fails, but not
 * when a later write fails (a thumbnail on a full disk) or its worker was killed (crash, time
 * limit, a disk-full stop that did not end in time).
 */
async function removeJobFiles(jobsDir: string, resultsDir: string, id: string): Promise<void> {
  const dir = path.join(jobsDir, id);
  await fs.promises.rm(path.join(dir, 'input'), { recursive: true, force: true });
  if (fs.existsSync(dir) && fs.readdirSync(dir).length === 0) await fs.promises.rmdir(dir);
  await fs.promises.rm(partialResultsDir(path.join(resultsDir, id)), { recursive: true, force: true });
}

function removePartialResults(resultsDir: string): void {
  for (const name of fs.readdirSync(resultsDir)) {
    if (name.endsWith(PARTIAL_SUFFIX)) fs.rmSync(path.join(resultsDir, name), { recursive: true, force: true });
  }
}

/**
 * Job folders without a record (a crash hit between moving the upload and writing the record) and
 * folders of finished jobs (a stop hit between the job's end and the removal of its uploads).
 */
function removeStaleJobFolders(jobsDir: string, store: JobStore, logger: Logger): void {
  for (const name of fs.readdirSync(jobsDir)) {
    const state = store.get(name)?.state;
    if (state === 'queued' || state === 'processing') continue;
    fs.rmSync(path.join(jobsDir, name), { recursive: true, force: true });
    if (state) logger.info({ job_id: name }, 'removed the uploads of a finished job');
    else logger.info({ job_id: name }, 'removed the files of an upload that never became a job');
  }
}
