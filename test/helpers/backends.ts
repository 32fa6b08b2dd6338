// Suites that must behave the same on both job stores run once per backend: SQLite (one box)
// and PostgreSQL (several nodes). One private PostgreSQL server serves the whole run (started
// on first use); every service or store a test makes gets a database of its own.
// VAA_BACKENDS=sqlite (or postgres) runs one of them only.
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { startPostgres, type PrivatePostgres } from '../../testkit/postgres.js';
import { PostgresDatabase } from '../../lib/db/postgres-database.js';
import { SqliteDatabase } from '../../lib/db/sqlite-database.js';
import { JobStore } from '../../lib/jobs/store.js';
import { jobsSchema } from '../../lib/jobs/schema.js';
import { camerasSchema } from '../../lib/cameras/schema.js';
import { webhooksSchema } from '../../lib/webhooks/schema.js';
import { sessionsSchema } from '../../lib/sessions/schema.js';

/** Every module's tables, as the service migrates them. */
export const ALL_SCHEMAS = [jobsSchema, camerasSchema, webhooksSchema, sessionsSchema];

export type BackendName = 'sqlite' | 'postgres';

export interface Backend {
  name: BackendName;
  /** Environment for a new service: DATABASE_URL of a new empty database, or nothing for SQLite. */
  env(): Promise<Record<string, string>>;
  /** A new empty store (SQLite in `dir`). */
  openStore(dir: string): Promise<JobStore>;
  /**
   * `count` stores on one new empty database: separate nodes of one service on PostgreSQL (a pool
   * and a LISTEN connection each); on SQLite one store on a file in `dir`, `count` times.
   */
  openStores(dir: string, count: number): Promise<JobStore[]>;
}

const SELECTED = (process.env.VAA_BACKENDS || 'sqlite,postgres').split(',') as BackendName[];

let server: Promise<PrivatePostgres> | null = null;
let databases = 0;

/** The run's PostgreSQL server, started on first use and stopped when the run ends. */
export function sharedPostgres(): Promise<PrivatePostgres> {
  return (server ??= startPostgres());
}

if (typeof after === 'function') {
  after(async () => {
    if (server) await (await server).stop();
  });
}

/** The URL of a new empty database on the run's server. */
export async function newDatabaseUrl(): Promise<string> {
  const pgServer = await sharedPostgres();
  const name = `t${process.pid}_${++databases}`;
  const client = new pg.Client({ connectionString: pgServer.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(pgServer.url);
  url.pathname = `/${name}`;
  return url.toString();
}

const silent = pino({ level: 'silent' });
const sqliteStore = (dir: string) => JobStore.open(new SqliteDatabase(path.join(dir, 'jobs.sqlite')), ALL_SCHEMAS);
const pgStore = async (url: string) => JobStore.open(await PostgresDatabase.open({ url, logger: silent }), ALL_SCHEMAS);

const backends: Record<BackendName, Backend> = {
  sqlite: {
    name: 'sqlite',
    env: async () => ({}),
    openStore: sqliteStore,
    // One box has one connection to its file (transactions of several in one process would wait
    // on each other's locks while blocking the event loop): the same store, `count` times.
    openStores: async (dir, count) => {
      const store = await sqliteStore(dir);
      return Array.from({ length: count }, () => store);
    },
  },
  postgres: {
    name: 'postgres',
    env: async () => ({ DATABASE_URL: await newDatabaseUrl() }),
    openStore: async () => pgStore(await newDatabaseUrl()),
    openStores: async (_dir, count) => {
      const url = await newDatabaseUrl();
      return Promise.all(Array.from({ length: count }, () => pgStore(url)));
    },
  },
};

/** `describe(title (backend))` once per selected backend; `this` in the body is the suite, as in describe's. */
export function describeBackends(title: string, body: (this: Mocha.Suite, backend: Backend) => void): void {
  for (const name of SELECTED) {
    describe(`${title} (${name})`, function () {
      if (name === 'postgres') {
        this.timeout(Math.max(this.timeout(), 60_000));
        before(() => sharedPostgres());
      }
      body.call(this, backends[name]);
    });
  }
}
