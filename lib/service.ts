// The composition root: the one place that opens and migrates the database, lists the service's
// modules and wires each one's store, routes and duties with what it needs; then starts the
// worker pool, queue, check schedule, webhook dispatcher, duty runner and HTTP server. Also the
// graceful stop: no new jobs, running ones finish or go back to the queue for the next start.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { analytics } from './analytics.js';
import { cameraFinishHook } from './cameras/check-outcome.js';
import { CheckSchedule } from './cameras/check-schedule.js';
import { signedPictureLink } from './cameras/http/picture-links.js';
import { camerasModule } from './cameras/module.js';
import type { Config } from './config.js';
import { provisionUsers, forgetFilePassword, type FirstCredentials } from './users/first-admin.js';
import { usersModule } from './users/module.js';
import type { UserStore } from './users/user-store.js';
import { Users } from './users/users.js';
import { SignInThrottle } from './users/sign-in-throttle.js';
import { Authenticator, principalOf } from './users/authenticator.js';
import { auditModule } from './audit/module.js';
import type { AuditStore } from './audit/audit-store.js';
import { auditTrail } from './audit/http/routes.js';
import { authenticate } from './http/auth.js';
import { clientAddress } from './http/client-address.js';
import type { Database } from './db/database.js';
import { openDatabase } from './db/open-database.js';
import { StorageGuard, type DiskSpaceProbe } from './disk-space.js';
import { DutyRunner } from './duty-runner.js';
import { createApp } from './http/app.js';
import { answerClientError } from './http/client-error.js';
import { ResultLinks } from './http/result-links.js';
import { healthRoutes } from './http/routes/health.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { openApiRoutes } from './http/routes/openapi.js';
import { servedAnalytics, type AnalyticHttp } from './served-analytics.js';
import { signedResultLink } from './jobs/http/results-routes.js';
import { presentTask } from './jobs/http/task-view.js';
import { removeJobFiles, removePartialResults, removeStaleJobFolders } from './jobs/job-folders.js';
import type { JobRecord } from './jobs/job-record.js';
import { jobsModule } from './jobs/module.js';
import { JobQueue } from './jobs/queue.js';
import type { JobStore } from './jobs/store.js';
import { WorkerPool } from './jobs/worker-pool.js';
import { ServiceMetrics } from './metrics.js';
import type { ModuleRoutes } from './service-module.js';
import { SESSION_PATH, sessionAuth } from './sessions/http/routes.js';
import { sessionsModule } from './sessions/module.js';
import type { SessionStore } from './sessions/session-store.js';
import { Sessions } from './sessions/sessions.js';
import { sourcesModule } from './sources/module.js';
import type { SourceStore } from './sources/source-store.js';
import type { CameraStore } from './cameras/camera-store.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { webhookFinishHook } from './webhooks/job-events.js';
import { webhooksModule } from './webhooks/module.js';
import type { OutboxStore } from './webhooks/outbox-store.js';
import { eventTargets, MILESTONE_RECEIVER, MQTT_RECEIVER } from './webhooks/outbox.js';
import { MqttOutput, mqttStatesDuty } from './mqtt/mqtt-output.js';
import { presentCameraSummary } from './cameras/present.js';
import { resolveWebhookSecret, type WebhookSecret } from './webhooks/secret.js';

/**
 * The service's modules, in the order their tables are migrated: a module after those whose
 * tables its migrations read (the cameras' second step reads the jobs' through their store).
 */
export const MODULES = [jobsModule, sourcesModule, camerasModule, webhooksModule, sessionsModule, usersModule, auditModule];

/** Every module's store on one database: the other modules reach a module's tables only through its store. */
export interface Stores {
  jobs: JobStore;
  sources: SourceStore;
  cameras: CameraStore;
  outbox: OutboxStore;
  sessions: SessionStore;
  users: UserStore;
  audit: AuditStore;
}

/** Brings every module's tables to their newest version, together, and opens their stores. */
export async function openStores(db: Database): Promise<Stores> {
  await db.migrate(MODULES.map((m) => m.schema));
  const sources = sourcesModule.openStore(db);
  return {
    jobs: jobsModule.openStore(db),
    sources,
    cameras: camerasModule.openStore(db, sources),
    outbox: webhooksModule.openStore(db),
    sessions: sessionsModule.openStore(db),
    users: usersModule.openStore(db),
    audit: auditModule.openStore(db),
  };
}

export interface RunningService extends Stores {
  url: string;
  /** This node's name (NODE_ID, or host name and port). */
  nodeId: string;
  /** Where this node's uploads are written while they arrive. */
  tmpDir: string;
  /** Where the first admin's password came from (AUTH_CREDENTIALS, DATA_DIR/credentials, or generated now). */
  credentials: FirstCredentials;
  /** The database every module's store works on (tests and benchmarks look into it). */
  db: Database;
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
  /** The modules' periodic duties; `duties.run(name)` runs one now. */
  duties: DutyRunner;
  /** The key webhook deliveries are signed with, and its file when it is not WEBHOOK_SECRET. */
  webhookSecret: WebhookSecret;
  app: Koa;
  /** Every route, as `METHOD /path` the way the router knows it (each has its access rule). */
  routes: string[];
  stop(graceMs?: number): Promise<void>;
}

/** How long a graceful stop waits for running jobs before re-queueing them. */
const STOP_GRACE_MS = 20_000;

export interface ServiceOptions {
  /** The clock for retention: results, records and sessions (tests move it, or freeze it at a fixture's time). */
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

  const webhookSecret = resolveWebhookSecret(config);
  const db = await openDatabase(config, logger);
  const closing: (() => Promise<void>)[] = [() => db.close()];
  const undo = async () => {
    for (const close of closing.reverse()) await close().catch(() => {});
  };
  let stores: Stores;
  try {
    stores = await openStores(db);
  } catch (err) {
    await undo();
    throw err;
  }
  const { jobs, sources, cameras, outbox, sessions: sessionStore, users: userStore, audit } = stores;
  let credentials: FirstCredentials;
  try {
    credentials = await provisionUsers(userStore, config, logger, now);
  } catch (err) {
    await undo();
    throw err;
  }

  await removeStaleJobFolders(jobsDir, jobs, db.shared, logger);
  // The node's name needs the port it listens on: the server listens first and gets its request
  // handler in the same turn of the event loop, before any request can arrive.
  const server = config.tls ? https.createServer({ cert: config.tls.cert, key: config.tls.key }) : http.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    closing.push(() => new Promise((r) => server.close(() => r())));
  } catch (err) {
    await undo();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const nodeId = config.nodeId ?? `${os.hostname()}:${port}`;
  try {
    // Two nodes of one name would release each other's leases.
    await db.holdName(nodeId);
  } catch (err) {
    await undo();
    throw err;
  }
  // One box owns DATA_DIR; nodes sharing it keep their unfinished uploads in a folder of their own.
  const tmpDir = db.shared ? path.join(config.dataDir, 'tmp', nodeId.replace(/[^\w.-]/g, '_')) : path.join(config.dataDir, 'tmp');
  fs.rmSync(tmpDir, { recursive: true, force: true }); // uploads cut off by this node's previous stop
  fs.mkdirSync(tmpDir, { recursive: true });
  // Other nodes may be writing results now; their leftovers go with the retention sweep.
  if (!db.shared) removePartialResults(resultsDir);

  const milestoneStatus = config.milestoneEventUrl ? { pending: () => outbox.pendingCount(`${MILESTONE_RECEIVER}${config.milestoneEventUrl}`) } : null;
  const mqttStatus = config.mqtt ? { connected: () => mqttOutput?.connected ?? false, pending: () => outbox.pendingCount(MQTT_RECEIVER) } : null;
  // After each (re)connection the events that waited for the broker are due at once.
  const mqttOutput = config.mqtt
    ? new MqttOutput({
        settings: config.mqtt,
        nodeId,
        cameras: {
          all: async () => (await cameras.list()).map((c) => ({ camera: c.id, state: presentCameraSummary(c) })),
          one: async (id) => {
            const c = await cameras.get(id);
            return c ? presentCameraSummary(c) : null;
          },
        },
        logger,
        timeoutMs: config.webhookTimeoutMs,
        onConnected: () => void outbox.dueNow(MQTT_RECEIVER).then(() => webhooks.nudge(), () => webhooks.nudge()),
      })
    : null;
  const throttle = new SignInThrottle(userStore, config.signInLimits, now);
  const duties = [
    ...jobsModule.duties({ store: jobs, recordRetentionMs: config.recordRetentionDays * 24 * 60 * 60 * 1000, resultsDir, resultTtlMs, logger, now, reclaimSpace: () => db.reclaimSpace() }),
    ...sourcesModule.duties(config.dataDir, sources),
    ...camerasModule.duties(config.dataDir, cameras, { sources, outbox, targets: eventTargets(config) }),
    ...webhooksModule.duties(outbox),
    ...sessionsModule.duties(sessionStore, now),
    ...usersModule.duties(userStore, throttle, now),
    ...auditModule.duties(audit, config.auditRetentionDays * 24 * 60 * 60 * 1000, now),
    ...(mqttOutput ? [mqttStatesDuty(mqttOutput)] : []),
  ];
  const pool = new WorkerPool({ size: config.workers, logger, memory: config.workerMemory ?? undefined });
  pool.start();
  const storage = new StorageGuard(config.dataDir, config.minFreeDiskBytes, options.diskSpace);
  const metrics: ServiceMetrics = new ServiceMetrics({
    nodeId,
    analytics: analytics.names,
    jobCounts: () => jobs.countsByState(),
    queueDepth: () => queue.depth(),
    runningHere: () => queue.runningHere,
    queueLimit: config.queueLimit,
    workersAlive: () => pool.alive,
    workerRestarts: () => pool.restarts,
    workerRetirements: () => pool.retired,
    workerPids: () => pool.pids,
    freeDiskBytes: () => storage.freeBytes(),
    webhooksPending: () => outbox.pendingCount(),
    mqtt: mqttStatus,
    milestone: milestoneStatus,
    cameraStates: () => cameras.stateCounts(),
    duties: duties.map((d) => d.name),
  });
  const dutyRunner = new DutyRunner({ duties, exclusive: (name, task) => db.exclusive(name, task), logger, metrics });
  const queue = new JobQueue({
    store: jobs,
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
    jobs,
    cameras,
    sources,
    dataDir: config.dataDir,
    jobsDir,
    sourceTimeoutMs: config.sourceTimeoutMs,
    slotMinutes: config.referenceSlotMinutes,
    logger,
    assertCapacity: () => queue.assertCapacity(),
    metrics,
  });

  const links = ResultLinks.fromDataDir(config.dataDir);
  const address = clientAddress(config.trustedProxies);
  const authenticator = new Authenticator({
    store: userStore,
    throttle,
    logger,
    now,
    metrics,
    onAttempt: (e) =>
      void audit
        .record({ at: now(), actor: e.method === 'key' ? `key:${e.presented}` : e.presented, address: e.address, action: e.outcome === 'ok' ? 'sign_in.succeeded' : 'sign_in.failed', target: e.method === 'key' ? `key:${e.presented}` : `user:${e.presented}`, detail: { method: e.method } })
        .catch((err) => logger.error({ err }, 'cannot record a sign-in in the audit trail')),
  });
  const users = new Users(userStore, now, (name) => forgetFilePassword(config.dataDir, name, logger));
  const sessions = new Sessions(
    sessionStore,
    {
      signIn: async (name, password, from) => {
        const r = await authenticator.password(name, password, from, 'console');
        if (r.outcome === 'throttled') return { throttled: r.retryAfterS };
        return r.outcome === 'ok' && r.user ? { passwordHash: r.user.passwordHash, principal: r.principal } : null;
      },
      current: async (name) => {
        const u = await userStore.get(name);
        return u && { passwordHash: u.passwordHash, principal: principalOf(u) };
      },
    },
    now,
  );
  const analyticHttp: Omit<AnalyticHttp, 'upload'> = {
    jobs,
    queue,
    logger,
    jobsDir,
    resultsDir,
    resultTtlMs,
    links,
    config,
    now,
    cameraChecks: { cameras, dataDir: config.dataDir, slotMinutes: config.referenceSlotMinutes, snapshots: config.milestoneEventUrl !== null },
  };
  const routes: ModuleRoutes[] = [
    ...servedAnalytics.map((served): ModuleRoutes => (router, http) => served.routes(router, { ...analyticHttp, ...http })),
    sessionsModule.routes(sessions, logger, address),
    usersModule.routes(users),
    auditModule.routes(audit),
    camerasModule.routes({ cameras, sources, outbox, jobs, queue, checks, links, logger, config }),
    jobsModule.routes({ jobs, now, resultsDir, resultTtlMs }),
    (router) => healthRoutes(router, { db, queue, pool, storage, config, logger, nodeId, mqtt: mqttStatus, milestone: milestoneStatus }),
    (router) => metricsRoutes(router, metrics),
    (router) => openApiRoutes(router),
  ];
  const signedLink = (ctx: Context) => signedResultLink(ctx, links) || signedPictureLink(ctx, links);
  const { app, router } = createApp({
    config,
    logger,
    authenticate: (bypass) => authenticate({ authenticator, address, bypass }),
    auditTrail: auditTrail(audit, address, logger, now),
    tmpDir,
    storage,
    metrics,
    admit: () => queue.assertCapacity(),
    signedLink,
    sessionAuth: sessionAuth(sessions, signedLink),
    openPaths: [SESSION_PATH],
    routes,
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
  const targets = eventTargets(config);
  jobs.onFinish(webhookFinishHook(outbox, targets, taskView), onFinishError);
  jobs.onFinish(
    cameraFinishHook({
      cameras,
      sources,
      outbox,
      targets,
      dataDir: config.dataDir,
      alarmAfter: config.alarmAfter,
      clearAfter: config.clearAfter,
      offlineAfter: config.offlineAfter,
      onStreamCheck: (lateness, wait) => metrics.observeStreamCheck(lateness, wait),
    }),
    onFinishError,
  );
  jobs.onPurge((tx, ids) => cameras.forgetChecksOfJobs(tx, ids));
  const webhooks = new WebhookDispatcher({
    mqtt: mqttOutput,
    outbox,
    shared: db.shared,
    subscribe: (listener) => jobs.subscribe(listener),
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
  dutyRunner.start();
  const resumed = db.shared ? released : await jobs.unfinishedCount();
  if (resumed > 0) logger.info({ resumed }, 'runs again the jobs left unfinished by the last run');

  let stopped: Promise<void> | null = null;
  const stop = (graceMs = STOP_GRACE_MS) =>
    (stopped ??= (async () => {
      await Promise.all([checks.stop(), dutyRunner.stop()]);
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await Promise.all([queue.stop(graceMs), webhooks.stop(graceMs)]);
      await mqttOutput?.stop();
      await pool.stop();
      // Runs cut short by the stop go back to the queue (for another node, or this one's next start).
      await queue.settled(graceMs);
      server.closeAllConnections();
      await closed;
      await db.close();
    })());

  return {
    url,
    nodeId,
    tmpDir,
    credentials,
    db,
    ...stores,
    pool,
    queue,
    resumed,
    metrics,
    storage,
    webhooks,
    checks,
    duties: dutyRunner,
    webhookSecret,
    app,
    routes: router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path)}`)),
    stop,
  };
}
