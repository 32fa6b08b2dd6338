// Wiring of the service: data folders, job store, worker pool, queue and HTTP server. Also the
// graceful stop: no new jobs, running ones finish or go back to the queue for the next start.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import { resolveCredentials, type ResolvedCredentials } from './http/credentials.js';
import { JobQueue } from './jobs/queue.js';
import { JobStore } from './jobs/store.js';
import { jobsSchema } from './jobs/schema.js';
import { openDatabase } from './db/open-database.js';
import { cameraFinishHook } from './cameras/check-outcome.js';
import { cameraStateCounts, forgetChecksOfJobs } from './cameras/camera-store.js';
import { camerasSchema } from './cameras/schema.js';
import { CheckSchedule } from './cameras/check-schedule.js';
import { webhooksSchema } from './webhooks/schema.js';
import { sessionsSchema } from './sessions/schema.js';
import { WorkerPool } from './jobs/worker-pool.js';
import { startRetentionSweeper, sweepResults } from './jobs/retention.js';
import { PARTIAL_SUFFIX, partialResultsDir } from './jobs/published-results.js';
import { startRecordRetention, sweepRecords, type RecordSweep } from './jobs/record-retention.js';
import { ResultLinks } from './http/result-links.js';
import { analytics } from './analytics.js';
import { servedAnalytics } from './http/served-analytics.js';
import { StorageGuard, type DiskSpaceProbe } from './disk-space.js';
import { ServiceMetrics } from './metrics.js';
import { answerClientError } from './http/client-error.js';
import { presentTask } from './http/task-view.js';
import type { JobRecord } from './jobs/store.js';
import { webhookFinishHook } from './webhooks/job-events.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { pendingDeliveries } from './webhooks/deliveries.js';
import { resolveWebhookSecret, type WebhookSecret } from './webhooks/secret.js';

export interface RunningService {
  url: string;
  /** This node's name (NODE_ID, or host name and port). */
  nodeId: string;
  /** Where this node's uploads are written while they arrive. */
  tmpDir: string;
  credentials: ResolvedCredentials;
  store: JobStore;
  pool: WorkerPool;
  queue: JobQueue;
  /** Jobs this node found left unfinished by its previous run and runs again. */
  resumed: number;
  metrics: ServiceMetrics;
  storage: StorageGuard;
  /** Delivers the outbox's webhook events. */
  webhooks: WebhookDispatcher;
  /** Queues the checks of camera streams on their schedule. */
  checks: CheckSchedule;
  /** The key webhook deliveries are signed with, and its file when it is not WEBHOOK_SECRET. */
  webhookSecret: WebhookSecret;
  /** Deletes expired result files now (the sweeper also runs hourly); resolves with the folders removed. */
  sweepResults(): Promise<number>;
  /** Deletes task records past RECORD_RETENTION_DAYS now (also at start and hourly). */
  sweepRecords(): Promise<RecordSweep>;
  stop(graceMs?: number): Promise<void>;
}

/** How long a graceful stop waits for running jobs before re-queueing them. */
const STOP_GRACE_MS = 20_000;

/**
 * An upload folder without a job record younger than this may belong to an upload another node
 * is accepting right now (DATA_DIR shared): start-up clean-up leaves it alone.
 */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

export interface ServiceOptions {
  /** The clock for result retention (tests move it forward). */
  now?: () => number;
  /** Free bytes in DATA_DIR (tests simulate a full disk); statfs by default. */
  diskSpace?: DiskSpaceProbe;
  /** How often the queue looks for claimable jobs it was not told about. @defaultValue 1000 */
  pollMs?: number;
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const now = options.now ?? Date.now;
  const jobsDir = path.join(config.dataDir, 'jobs');
  const resultsDir = path.join(config.dataDir, 'results');
  const resultTtlMs = config.resultTtlDays * 24 * 60 * 60 * 1000;
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(jobsDir, { recursive: true });
  fs.mkdirSync(resultsDir, { recursive: true });

  const credentials = resolveCredentials(config);
  const webhookSecret = resolveWebhookSecret(config);
  const db = await openDatabase(config, logger);
  let store: JobStore;
  try {
    store = await JobStore.open(db, [jobsSchema, camerasSchema, webhooksSchema, sessionsSchema]);
  } catch (err) {
    await db.close();
    throw err;
  }
  await removeStaleJobFolders(jobsDir, store, logger);
  // The node's name needs the port it listens on: the server listens first and gets its request
  // handler in the same turn of the event loop, before any request can arrive.
  const server = config.tls ? https.createServer({ cert: config.tls.cert, key: config.tls.key }) : http.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const nodeId = config.nodeId ?? `${os.hostname()}:${port}`;
  try {
    // Two nodes of one name would release each other's leases.
    await db.holdName(nodeId);
  } catch (err) {
    await new Promise((r) => server.close(r));
    await store.close();
    throw err;
  }
  // One box owns DATA_DIR; nodes sharing it keep their unfinished uploads in a folder of their own.
  const tmpDir = store.shared ? path.join(config.dataDir, 'tmp', nodeId.replace(/[^\w.-]/g, '_')) : path.join(config.dataDir, 'tmp');
  fs.rmSync(tmpDir, { recursive: true, force: true }); // uploads cut off by this node's previous stop
  fs.mkdirSync(tmpDir, { recursive: true });
  // Other nodes may be writing results now; their leftovers go with the retention sweep.
  if (!store.shared) removePartialResults(resultsDir);

  const pool = new WorkerPool({ size: config.workers, logger });
  pool.start();
  const storage = new StorageGuard(config.dataDir, config.minFreeDiskBytes, options.diskSpace);
  const metrics: ServiceMetrics = new ServiceMetrics({
    nodeId,
    analytics: analytics.names,
    jobCounts: () => store.countsByState(),
    queueDepth: () => queue.depth(),
    runningHere: () => queue.runningHere,
    queueLimit: config.queueLimit,
    workersAlive: () => pool.alive,
    workerRestarts: () => pool.restarts,
    workerPids: () => pool.pids,
    freeDiskBytes: () => storage.freeBytes(),
    webhooksPending: () => pendingDeliveries(db),
    cameraStates: () => cameraStateCounts(db),
  });
  const queue = new JobQueue({
    store,
    pool,
    logger,
    nodeId,
    concurrency: config.workers,
    limit: config.queueLimit,
    maxAttempts: config.jobMaxAttempts,
    leaseMs: config.jobLeaseMs,
    pollMs: options.pollMs,
    analytics,
    config,
    onFinished: (id) => removeJobFiles(jobsDir, resultsDir, id),
    storage,
    metrics,
  });
  const checks = new CheckSchedule({
    db,
    store,
    dataDir: config.dataDir,
    jobsDir,
    sourceTimeoutMs: config.sourceTimeoutMs,
    slotMinutes: config.referenceSlotMinutes,
    logger,
    assertCapacity: () => queue.assertCapacity(),
    metrics,
  });

  const retention = { resultsDir, dataDir: config.dataDir, ttlMs: resultTtlMs, store, logger, now };
  const links = ResultLinks.fromDataDir(config.dataDir);
  const app = createApp({
    config, store, queue, logger, jobsDir, tmpDir, resultsDir, resultTtlMs, links, now, pool, storage, metrics, nodeId,
    analytics: servedAnalytics,
    checks,
    credentials: credentials.credentials,
  });
  server.on('request', app.callback());
  server.on('clientError', answerClientError);
  server.requestTimeout = 0; // large uploads may take long; formidable enforces the size limit
  // Longer than the usual client and proxy idle timeouts, so they close idle sockets first and
  // never send a request on a socket the server is closing.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  // What happens with a job's outcome, in its transaction: its job.completed event, then a camera
  // check's bookkeeping (lib/cameras/check-outcome.ts). Result links in an event body point at
  // PUBLIC_BASE_URL, else at this node: by its host name when it listens on every interface (a
  // receiver elsewhere cannot use 127.0.0.1).
  const anyInterface = config.host === '0.0.0.0' || config.host === '::';
  const webhookBase = config.publicBaseUrl ?? (anyInterface ? `${config.tls ? 'https' : 'http'}://${os.hostname()}:${port}` : url);
  const presenters = new Map(servedAnalytics.map((s) => [s.analytic.name, s.presentAt]));
  const taskView = (job: JobRecord) => presenters.get(job.analytic)?.(job, { links, resultTtlMs }, webhookBase) ?? presentTask(job);
  const onFinishError = (err: unknown, job: JobRecord) => logger.error({ err, job_id: job.id }, 'recording what follows from the job outcome failed; undone');
  const cameraHook = cameraFinishHook({
    alarmAfter: config.alarmAfter,
    clearAfter: config.clearAfter,
    offlineAfter: config.offlineAfter,
    targets: { webhookUrl: config.webhookUrl },
    onStreamCheck: (lateness, wait) => metrics.observeStreamCheck(lateness, wait),
  });
  store.onFinish(webhookFinishHook({ webhookUrl: config.webhookUrl }, taskView), onFinishError);
  store.onFinish(cameraHook, onFinishError);
  store.onPurge(forgetChecksOfJobs);
  const webhooks = new WebhookDispatcher({
    store,
    logger,
    nodeId,
    secret: webhookSecret.secret,
    timeoutMs: config.webhookTimeoutMs,
    retry: { baseMs: config.webhookBackoffMs, windowMs: config.webhookRetryMs },
    metrics,
  });

  const released = await queue.start();
  await webhooks.start();
  checks.start();
  const resumed = store.shared ? released : await store.unfinishedCount();
  if (resumed > 0) logger.info({ resumed }, 'runs again the jobs left unfinished by the last run');
  const stopSweeper = startRetentionSweeper(retention);
  const records = { store, retentionMs: config.recordRetentionDays * 24 * 60 * 60 * 1000, logger, now };
  const stopRecordSweeper = startRecordRetention(records);

  let stopped: Promise<void> | null = null;
  const stop = (graceMs = STOP_GRACE_MS) =>
    (stopped ??= (async () => {
      stopSweeper();
      stopRecordSweeper();
      await checks.stop();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await Promise.all([queue.stop(graceMs), webhooks.stop(graceMs)]);
      await pool.stop();
      // Runs cut short by the stop go back to the queue (for another node, or this one's next start).
      await queue.settled(graceMs);
      server.closeAllConnections();
      await closed;
      await store.close();
    })());

  return { url, nodeId, tmpDir, credentials, store, pool, queue, resumed, metrics, storage, webhooks, checks, webhookSecret, sweepResults: () => sweepResults(retention), sweepRecords: () => sweepRecords(records), stop };
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
 * With a shared DATA_DIR a folder without a record may be an upload another node is accepting:
 * only old ones go.
 */
async function removeStaleJobFolders(jobsDir: string, store: JobStore, logger: Logger): Promise<void> {
  for (const name of fs.readdirSync(jobsDir)) {
    const dir = path.join(jobsDir, name);
    const state = (await store.get(name))?.state;
    if (state === 'queued' || state === 'processing') continue;
    if (!state && store.shared && Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0) < ORPHAN_AGE_MS) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    if (state) logger.info({ job_id: name }, 'removed the uploads of a finished job');
    else logger.info({ job_id: name }, 'removed the files of an upload that never became a job');
  }
}
