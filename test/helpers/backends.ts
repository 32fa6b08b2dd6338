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
import type { Database } from '../../lib/db/database.js';
import { MODULES } from '../../lib/service.js';
import { storesOn, type TestStores } from '../../testkit/stores.js';

export { storesOn, type TestStores };

/** Every module's tables, as the service migrates them. */
export const ALL_SCHEMAS = MODULES.map((m) => m.schema);

export type BackendName = 'sqlite' | 'postgres';

export interface Backend {
  name: BackendName;
  /** A new empty database, not migrated (SQLite in `dir`). */
  openDatabase(dir: string): Promise<Database>;
  /** Environment for a new service: DATABASE_URL of a new empty database, or nothing for SQLite. */
  env(): Promise<Record<string, string>>;
  /** Every module's store on a new empty database (SQLite in `dir`). */
  openStores(dir: string): Promise<TestStores>;
  /**
   * `count` nodes' stores on one new empty database: separate nodes of one service on PostgreSQL
   * (a pool and a LISTEN connection each); on SQLite one set of stores on a file in `dir`, `count` times.
   */
  openNodes(dir: string, count: number): Promise<TestStores[]>;
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

const sqliteStores = (dir: string) => storesOn(new SqliteDatabase(path.join(dir, 'appliance.sqlite')));
const pgStores = async (url: string) => storesOn(await PostgresDatabase.open({ url, logger: silent }));

const backends: Record<BackendName, Backend> = {
  sqlite: {
    name: 'sqlite',
    openDatabase: async (dir) => new SqliteDatabase(path.join(dir, 'appliance.sqlite')),
    env: async () => ({}),
    openStores: sqliteStores,
    // One box has one connection to its file (transactions of several in one process would wait
    // on each other's locks while blocking the event loop): the same stores, `count` times.
    openNodes: async (dir, count) => {
      const stores = await sqliteStores(dir);
      return Array.from({ length: count }, () => stores);
    },
  },
  postgres: {
    name: 'postgres',
    openDatabase: async () => PostgresDatabase.open({ url: await newDatabaseUrl(), logger: silent }),
    env: async () => ({ DATABASE_URL: await newDatabaseUrl() }),
    openStores: async () => pgStores(await newDatabaseUrl()),
    openNodes: async (_dir, count) => {
      const url = await newDatabaseUrl();
      return Promise.all(Array.from({ length: count }, () => pgStores(url)));
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
