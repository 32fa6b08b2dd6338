// The service as the benches run it: one box on SQLite, or several nodes on one private
// PostgreSQL (testkit/postgres.ts) sharing one DATA_DIR, each node a `node build/lib/main.js`
// process. A bench reads the job rows straight from the deployment's database (`jobs`): when a
// job was created, started and finished, its attempts and its lease owner, which the API does
// not show; nothing is added to the API for a bench. PostgreSQL runs with its own durable
// defaults (startBenchPostgres), not the test cluster's speed settings.
//
// Timestamps: created_at is the accepting node's Date.now(), finished_at the running node's,
// started_at the database's clock for PostgreSQL and Date.now() for SQLite. On one machine these
// are one clock, so differences between them and the bench's own Date.now() are meaningful.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { spawnService, type ServiceProcess } from '../testkit/service.js';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';
import { DATABASE_FILE } from '../lib/db/open-database.js';

export type Backend = 'sqlite' | 'postgres';

/** Every query a bench sends to the database starts with this (pg_stat_statements keeps them apart). */
export const BENCH_QUERY_TAG = '/* bench */';

export interface DeploymentSpec {
  backend: Backend;
  /** Worker processes per node: [2] is one box with WORKERS=2, [1, 1, 0] three nodes (the third API-only). */
  workers: number[];
  /** Environment common to every node (QUEUE_LIMIT, KAMCHECK_WAIT_MS, ...). */
  env: Record<string, string>;
  /** PostgreSQL to use, its job tables dropped first; otherwise startBenchPostgres() starts one, stopped with the deployment. */
  postgres?: PrivatePostgres;
}

/** What a bench reads of a job. Times in ms since the epoch. */
export interface JobTimes {
  id: string;
  analytic: string;
  state: string;
  attempts: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  leaseOwner: string | null;
}

export interface Deployment {
  /** e.g. "SQLite, 1 node (WORKERS=2)" or "PostgreSQL, 3 nodes (WORKERS=1+1+0)". */
  label: string;
  spec: DeploymentSpec;
  /** One per node, in order; node i has NODE_ID node-<i+1> (its jobs' lease owner). */
  urls: string[];
  nodes: ServiceProcess[];
  /** The PostgreSQL server (postgres backend only). */
  postgres: PrivatePostgres | null;
  /** Every job row (the benches' tables are small). */
  jobs(): Promise<JobTimes[]>;
  /** One job row, or null. */
  job(id: string): Promise<JobTimes | null>;
  stop(): Promise<void>;
}

const COLUMNS = 'id, analytic, state, attempts, created_at, started_at, finished_at, lease_owner';

export function describeSpec(spec: Pick<DeploymentSpec, 'backend' | 'workers'>): string {
  const nodes = spec.workers.length;
  return `${spec.backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${nodes} node${nodes > 1 ? 's' : ''} (WORKERS=${spec.workers.join('+')})`;
}

/** Starts the nodes one after another (each loads its models before it listens) on a fresh DATA_DIR. */
export async function startDeployment(spec: DeploymentSpec): Promise<Deployment> {
  if (spec.backend === 'sqlite' && spec.workers.length !== 1) throw new Error('SQLite serves one node only');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-deploy-'));
  const dataDir = path.join(dir, 'data');
  const ownPostgres = spec.backend === 'postgres' && !spec.postgres;
  let postgres: PrivatePostgres | null = null;
  const nodes: ServiceProcess[] = [];
  let reader: RowReader | null = null;
  const stop = async () => {
    for (const node of nodes) node.child.kill('SIGTERM');
    await Promise.all(nodes.map((node) => node.exited));
    await reader?.close();
    if (ownPostgres) await postgres?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    let databaseEnv: Record<string, string> = {};
    if (spec.backend === 'postgres') {
      postgres = spec.postgres ?? (await startBenchPostgres());
      await dropJobTables(postgres.url);
      databaseEnv = { DATABASE_URL: postgres.url };
    }
    for (const [i, workers] of spec.workers.entries()) {
      nodes.push(
        await spawnService({
          DATA_DIR: dataDir,
          AUTH_CREDENTIALS: 'bench:bench',
          MIN_FREE_DISK_MB: '1',
          ...spec.env,
          ...databaseEnv,
          NODE_ID: `node-${i + 1}`,
          WORKERS: String(workers),
        }),
      );
    }
    reader = postgres ? await PgRows.open(postgres.url) : new SqliteRows(path.join(dataDir, DATABASE_FILE));
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  const rows = reader;
  return {
    label: describeSpec(spec),
    spec,
    urls: nodes.map((n) => n.url),
    nodes,
    postgres,
    jobs: () => rows.all(),
    job: (id) => rows.one(id),
    stop,
  };
}

/**
 * PostgreSQL's own defaults where the test cluster trades safety for speed (testkit/postgres.ts
 * turns fsync and full-page writes off and keeps 32 MB of shared buffers): a bench measures a
 * server as it would be deployed, each commit flushed to disk.
 */
export const DURABLE_SETTINGS: Record<string, string> = { fsync: 'on', full_page_writes: 'on', shared_buffers: '128MB' };

/**
 * A private PostgreSQL for a bench: with DURABLE_SETTINGS unless told otherwise, and with
 * pg_stat_statements loaded when asked (bench-statements.ts reads it).
 */
export async function startBenchPostgres(o: { durable?: boolean; statementStats?: boolean } = {}): Promise<PrivatePostgres> {
  const postgres = await startPostgres();
  try {
    const settings = { ...(o.durable === false ? {} : DURABLE_SETTINGS), ...(o.statementStats ? { shared_preload_libraries: 'pg_stat_statements' } : {}) };
    await configure(postgres, settings);
    if (o.statementStats) await withClient(postgres.url, (c) => c.query(`${BENCH_QUERY_TAG} CREATE EXTENSION IF NOT EXISTS pg_stat_statements`));
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  return postgres;
}

/** Sets server settings (ALTER SYSTEM) and restarts the server for them: before any node connects. */
export async function configure(postgres: PrivatePostgres, settings: Record<string, string>): Promise<void> {
  if (Object.keys(settings).length === 0) return;
  await withClient(postgres.url, async (c) => {
    for (const [name, value] of Object.entries(settings)) await c.query(`${BENCH_QUERY_TAG} ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
  });
  await postgres.restart();
}

export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'bench' });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** A fresh schema for the next deployment on the same server (the first node creates it again). */
async function dropJobTables(url: string): Promise<void> {
  await withClient(url, (c) => c.query(`${BENCH_QUERY_TAG} DROP TABLE IF EXISTS jobs, schema_version`));
}

interface RowReader {
  all(): Promise<JobTimes[]>;
  one(id: string): Promise<JobTimes | null>;
  close(): Promise<void>;
}

interface Row {
  id: string;
  analytic: string;
  state: string;
  attempts: number | string;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
  lease_owner: string | null;
}

function times(row: Row): JobTimes {
  const ms = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    id: row.id,
    analytic: row.analytic,
    state: row.state,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    startedAt: ms(row.started_at),
    finishedAt: ms(row.finished_at),
    leaseOwner: row.lease_owner,
  };
}

/** Read-only beside the service's own connection (WAL: readers do not block its writes). */
class SqliteRows implements RowReader {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
  }

  async all(): Promise<JobTimes[]> {
    return (this.db.prepare(`${BENCH_QUERY_TAG} SELECT ${COLUMNS} FROM jobs`).all() as Row[]).map(times);
  }

  async one(id: string): Promise<JobTimes | null> {
    const row = this.db.prepare(`${BENCH_QUERY_TAG} SELECT ${COLUMNS} FROM jobs WHERE id = ?`).get(id) as Row | undefined;
    return row ? times(row) : null;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

class PgRows implements RowReader {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<PgRows> {
    const client = new pg.Client({ connectionString: url, application_name: 'bench' });
    await client.connect();
    return new PgRows(client);
  }

  async all(): Promise<JobTimes[]> {
    return (await this.client.query<Row>(`${BENCH_QUERY_TAG} SELECT ${COLUMNS} FROM jobs`)).rows.map(times);
  }

  async one(id: string): Promise<JobTimes | null> {
    const { rows } = await this.client.query<Row>(`${BENCH_QUERY_TAG} SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return rows[0] ? times(rows[0]) : null;
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
