// Suites that must behave the same on both job stores run once per backend: SQLite (one box)
// and PostgreSQL (several nodes). One private PostgreSQL server serves the whole run (started
// on first use); every service or store a test makes gets a database of its own.
// VAA_BACKENDS=sqlite (or postgres) runs one of them only.
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { startPostgres, type PrivatePostgres } from '../../testkit/postgres.js';
import { PgJobStore } from '../../lib/jobs/pg-store.js';
import { SqliteJobStore } from '../../lib/jobs/sqlite-store.js';
import type { JobStore } from '../../lib/jobs/store.js';

export type BackendName = 'sqlite' | 'postgres';

export interface Backend {
  name: BackendName;
  /** Environment for a new service: DATABASE_URL of a new empty database, or nothing for SQLite. */
  env(): Promise<Record<string, string>>;
  /** A new empty store (SQLite in `dir`). */
  openStore(dir: string): Promise<JobStore>;
  /**
   * `count` stores on one new empty database: separate nodes of one service on PostgreSQL (a pool
   * and a LISTEN connection each), separate connections to one file on SQLite (in `dir`).
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

const backends: Record<BackendName, Backend> = {
  sqlite: {
    name: 'sqlite',
    env: async () => ({}),
    openStore: async (dir) => new SqliteJobStore(path.join(dir, 'jobs.sqlite')),
    openStores: async (dir, count) => Array.from({ length: count }, () => new SqliteJobStore(path.join(dir, 'jobs.sqlite'))),
  },
  postgres: {
    name: 'postgres',
    env: async () => ({ DATABASE_URL: await newDatabaseUrl() }),
    openStore: async () => PgJobStore.open({ url: await newDatabaseUrl(), logger: pino({ level: 'silent' }) }),
    openStores: async (_dir, count) => {
      const url = await newDatabaseUrl();
      return Promise.all(Array.from({ length: count }, () => PgJobStore.open({ url, logger: pino({ level: 'silent' }) })));
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
