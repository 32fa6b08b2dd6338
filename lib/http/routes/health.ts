// GET /healthz: is the appliance able to take and run jobs? The service answers (up), its
// database answers a query, at least one analytics worker runs, DATA_DIR has more free space
// than MIN_FREE_DISK_MB, and no job has run out of disk space lately (OUT_OF_SPACE_REPORT_MS,
// unless a job has written its results since). 200 when all hold; 503 with the same body, plus
// the SPEC's `error`, when one does not, so a monitor can read what is wrong from either.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { wholeMib } from '../../bytes.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import type { StorageGuard } from '../../disk-space.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { WorkerPool } from '../../jobs/worker-pool.js';
import { errorBody } from '../errors.js';

/** What the health check looks at. */
export interface HealthSources {
  db: Pick<Database, 'ping' | 'backend'>;
  queue: Pick<JobQueue, 'depth' | 'runningHere'>;
  pool: Pick<WorkerPool, 'alive' | 'restarts'>;
  storage: StorageGuard;
  config: Pick<Config, 'workers' | 'queueLimit'>;
  logger: Logger;
  /** This node's name (NODE_ID). */
  nodeId: string;
  /** With MQTT_URL: the broker connection and the events waiting for it; reported, not judged. */
  mqtt?: { connected(): boolean; pending(): Promise<number> } | null;
  /** With MILESTONE_EVENT_URL: the analytics events waiting for XProtect; reported, not judged. */
  milestone?: { pending(): Promise<number> } | null;
}

export interface HealthReport {
  healthy: boolean;
  service: { up: true; uptime_seconds: number };
  /** The node that answered, and which database it uses. */
  node: { id: string; backend: string };
  database: { ok: boolean };
  workers: { ok: boolean; alive: number; configured: number; restarts: number };
  /** Depth is the cluster's: jobs queued or running on every node; running is this node's. */
  queue: { depth: number | null; limit: number; running: number };
  disk: {
    ok: boolean;
    free_bytes: number;
    min_free_bytes: number;
    /** The job that ran out of disk space lately; absent when none did. */
    job_out_of_space?: { job_id: string; at: string };
  };
  /** With MQTT_URL. */
  mqtt?: { connected: boolean; pending: number | null };
  /** With MILESTONE_EVENT_URL. */
  milestone?: { pending: number | null };
}

export function healthRoutes(router: Router, deps: HealthSources): void {
  const startedAt = Date.now();
  router.get('/healthz', async (ctx: Context) => {
    const { report, problems } = await checkHealth(deps, startedAt);
    ctx.set('Cache-Control', 'no-store');
    if (report.healthy) {
      ctx.body = { status: 'success', health: report };
      return;
    }
    ctx.status = 503;
    ctx.body = { ...errorBody('unhealthy', problems.join('; ')), health: report };
  });
}

export async function checkHealth(deps: HealthSources, startedAt: number): Promise<{ report: HealthReport; problems: string[] }> {
  const problems: string[] = [];
  let database = true;
  try {
    await deps.db.ping();
  } catch (err) {
    database = false;
    deps.logger.error({ err }, 'health check: the database does not answer');
    problems.push('the database does not answer');
  }
  let depth: number | null = null;
  if (database) depth = await deps.queue.depth().catch(() => null);
  const alive = deps.pool.alive;
  // A node with WORKERS=0 answers the API only: no worker is what it was asked for.
  const workersOk = alive > 0 || deps.config.workers === 0;
  if (!workersOk) problems.push('no analytics worker process is running');
  let free = 0;
  try {
    free = await deps.storage.freeBytes();
  } catch (err) {
    deps.logger.error({ err }, 'health check: cannot read the free disk space');
    problems.push('the free disk space of the data directory cannot be read');
  }
  const aboveFloor = free >= deps.storage.minFreeBytes;
  if (!aboveFloor) problems.push(`free disk space is below MIN_FREE_DISK_MB (${wholeMib(free)} MiB free, ${wholeMib(deps.storage.minFreeBytes)} MiB required)`);
  const outOfSpace = deps.storage.recentOutOfSpace();
  if (outOfSpace) {
    const ago = Math.round((Date.now() - outOfSpace.at) / 1000);
    problems.push(`job ${outOfSpace.jobId} ran out of disk space ${ago} s ago and failed; free space in the data directory`);
  }
  const diskOk = aboveFloor && !outOfSpace;
  const report: HealthReport = {
    healthy: problems.length === 0,
    service: { up: true, uptime_seconds: Math.round((Date.now() - startedAt) / 1000) },
    node: { id: deps.nodeId, backend: deps.db.backend },
    database: { ok: database },
    workers: { ok: workersOk, alive, configured: deps.config.workers, restarts: deps.pool.restarts },
    queue: { depth, limit: deps.config.queueLimit, running: deps.queue.runningHere },
    disk: {
      ok: diskOk,
      free_bytes: free,
      min_free_bytes: deps.storage.minFreeBytes,
      ...(outOfSpace && { job_out_of_space: { job_id: outOfSpace.jobId, at: new Date(outOfSpace.at).toUTCString() } }),
    },
    ...(deps.mqtt && { mqtt: { connected: deps.mqtt.connected(), pending: database ? await deps.mqtt.pending().catch(() => null) : null } }),
    ...(deps.milestone && { milestone: { pending: database ? await deps.milestone.pending().catch(() => null) : null } }),
  };
  return { report, problems };
}
