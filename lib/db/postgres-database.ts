// The database of several nodes as one service: PostgreSQL, through a `pg` pool. Notifications
// between nodes are LISTEN/NOTIFY on a connection of its own, re-opened when lost; a node's name
// is a session advisory lock on another, so a node that dies lets go of it with its connection.
//
// A NOTIFY is sent after the write it announces has committed, in a transaction of its own that
// does not wait for the disk: PostgreSQL holds a server-wide lock from a notifying commit until
// that commit is flushed, so notifying inside the writer's own transaction would keep commits from
// sharing a flush (measured: 1895 plain commits/s against 281 notifying ones on 16 connections).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database, DatabaseEvent, Tx } from './database.js';
import { postgresDialect } from './dialect.js';
import { NameTakenError, DatabaseUnavailableError } from './errors.js';
import { applyMigrations, type SchemaModule } from './migrations.js';
import { clientTx, numbered, readTypes } from './postgres-values.js';
import { bodyTx, TransactionScope } from './transaction-scope.js';

/** The channel of the database's notifications (jobs queued and finished, for now). */
const CHANNEL = 'vaa_db';
/** How long a start waits for a node name held by a session the server is still ending. */
const NAME_RELEASE_WAIT_MS = 3000;
/** Serialises migrations of nodes starting together (any constant unique to this service). */
const MIGRATION_LOCK = 0x7661616d; // "vaam", within a JavaScript number's exact range

export interface PostgresOptions {
  url: string;
  logger: Logger;
  /** Connections this node opens for queries (plus one for LISTEN). @defaultValue 10 */
  poolSize?: number;
  /** How long opening waits for the database to answer. @defaultValue 30 s */
  startTimeoutMs?: number;
}

export class PostgresDatabase implements Database {
  readonly dialect = postgresDialect;
  readonly backend = 'postgres';
  readonly shared = true;
  private readonly events = new EventEmitter();
  private listener: pg.Client | null = null;
  private nameHolder: pg.Client | null = null;
  private closed = false;
  private readonly scope = new TransactionScope();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Connects, waiting up to startTimeoutMs for the database, and starts listening. */
  static async open(options: PostgresOptions): Promise<PostgresDatabase> {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
      // Opening a connection costs 20-30 ms: idle ones are kept for a while.
      idleTimeoutMillis: 10 * 60_000,
      application_name: 'vaa',
      types: { getTypeParser: readTypes },
    });
    // An idle connection the server closed (restart) is dropped by the pool; without a listener
    // its 'error' would end the process.
    pool.on('error', (err) => options.logger.warn({ err: err.message }, 'a database connection was lost'));
    const db = new PostgresDatabase(pool, options);
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    for (;;) {
      try {
        await pool.query('SELECT 1');
        break;
      } catch (err) {
        if (!isUnavailable(err) || Date.now() > deadline) {
          await pool.end();
          throw err;
        }
        options.logger.warn({ err: (err as Error).message }, 'waiting for the database');
        await sleep(1000);
      }
    }
    // The pool's connections open now rather than under the first requests (20-30 ms each).
    await Promise.all(Array.from({ length: options.poolSize ?? 10 }, () => pool.query('SELECT 1'))).catch(() => {});
    void db.listen();
    return db;
  }

  async migrate(modules: SchemaModule[]): Promise<void> {
    await this.transaction(async (tx) => {
      await tx.run('SELECT pg_advisory_xact_lock(?)', MIGRATION_LOCK);
      // The single version of the releases before schema_modules; its jobs table had the columns
      // of SQLite's second version from the start, hence one more.
      const legacy = (await tx.get<{ t: string | null }>(`SELECT to_regclass('schema_version') AS t`))?.t
        ? ((await tx.get<{ version: number }>('SELECT version FROM schema_version'))?.version ?? 0)
        : 0;
      await applyMigrations(tx, this.dialect, modules, legacy === 0 ? 0 : legacy + 1);
    });
  }

  /** Statements outside a transaction, each on whichever connection of the pool is free. */
  readonly sql: Tx = {
    all: async <T>(sql: string, ...params: unknown[]) => (await this.outside(numbered(sql), params)).rows as T[],
    get: async <T>(sql: string, ...params: unknown[]) => (await this.outside(numbered(sql), params)).rows[0] as T | undefined,
    run: async (sql: string, ...params: unknown[]) => (await this.outside(numbered(sql), params)).rowCount ?? 0,
    exec: async (sql: string) => void (await this.outside(sql)),
  };

  /** Each transaction has a connection of its own: statements of other chains run on others. */
  async transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    this.scope.assertOutside('a transaction');
    const held = await this.checkOut();
    const rollback = () => held.client.query('ROLLBACK').then(() => {}, () => held.lost());
    try {
      await held.client.query('BEGIN');
    } catch (err) {
      await rollback();
      held.release();
      throw unavailable(err);
    }
    const own = bodyTx(clientTx(held.client));
    // The connection goes back to the pool as the transaction ends, before the notifications its
    // body sent go out (on connections of the pool too).
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.release();
    };
    try {
      return await this.scope.run(() => body(own.tx), {
        commit: async () => {
          own.end();
          await held.client.query('COMMIT');
          release();
        },
        rollback: async () => {
          own.end();
          if (released) return;
          await rollback();
          release();
        },
      });
    } catch (err) {
      throw unavailable(err);
    } finally {
      release();
    }
  }

  /** A session advisory lock on a connection held for the task: a node that dies lets go with its connection. */
  async exclusive(name: string, task: () => Promise<void>): Promise<boolean> {
    const held = await this.checkOut();
    try {
      const { rows } = await held.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [name]);
      if (!rows[0].locked) return false;
      try {
        await task();
      } finally {
        await held.client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => {});
      }
      return true;
    } catch (err) {
      throw unavailable(err);
    } finally {
      held.release();
    }
  }

  /**
   * A session advisory lock on a connection of its own, held until close(). A node paused or cut
   * off keeps its connection, and its name with it, until the server drops the connection; a
   * connection lost (the database restarting) is opened again and the lock taken again.
   */
  async holdName(name: string): Promise<void> {
    const client = await this.lockName(name, NAME_RELEASE_WAIT_MS);
    if (!client) throw nameTaken(name);
    this.keepName(name, client);
  }

  /** A connection holding the name's lock, or null when a live session holds it past `waitMs`. */
  private async lockName(name: string, waitMs: number): Promise<pg.Client | null> {
    const client = new pg.Client({ connectionString: this.options.url, application_name: 'vaa-node' });
    // Errors end the connection; keepName() hears of it through 'end'.
    client.on('error', () => {});
    try {
      await client.connect();
      // A node killed just now holds the name until the server has ended its session (a moment).
      const deadline = Date.now() + waitMs;
      for (;;) {
        const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext('vaa-node:' || $1)) AS locked`, [name]);
        if (rows[0].locked) return client;
        if (Date.now() > deadline) break;
        await sleep(250);
      }
    } catch (err) {
      await client.end().catch(() => {});
      throw unavailable(err);
    }
    await client.end().catch(() => {});
    return null;
  }

  /** Holds the name while the node runs: a lost connection is replaced once the database answers again. */
  private keepName(name: string, first: pg.Client): void {
    this.nameHolder = first;
    const watch = (client: pg.Client) =>
      client.once('end', async () => {
        if (this.closed) return;
        this.options.logger.warn({ node: name }, 'lost the connection that holds this node name; reconnecting');
        while (!this.closed) {
          await sleep(1000);
          const next = await this.lockName(name, 0).catch(() => undefined);
          if (next === undefined) continue; // not reachable yet
          if (next === null) {
            this.options.logger.error({ node: name }, `${nameTaken(name).message}: another node took this node's name while the database was out of reach`);
            return;
          }
          if (this.closed) {
            await next.end().catch(() => {});
            return;
          }
          this.nameHolder = next;
          this.options.logger.info({ node: name }, 'holds this node name again');
          watch(next);
          return;
        }
      });
    watch(first);
  }

  /** Tells the listening nodes. A notification lost with the connection or a crash only delays a claim or a wait until the next poll. */
  async notify(payload: string): Promise<void> {
    // Sent from a transaction body, it waits for the commit (and resolves at once): no node looks
    // before the write is there.
    let sending: Promise<void> | undefined;
    this.scope.afterCommit(() => (sending = this.sendNotification(payload)));
    await sending;
  }

  private async sendNotification(payload: string): Promise<void> {
    try {
      // One statement, its own transaction; set_config(..., true) lasts until its commit.
      await this.pool.query(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [CHANNEL, payload]);
    } catch (err) {
      this.options.logger.debug({ err: (err as Error).message }, 'a notification was not sent');
    }
  }

  subscribe(listener: (event: DatabaseEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  /** Autovacuum reuses the space of deleted rows (the batched deletes leave it time to keep up); the files do not shrink. */
  async reclaimSpace(): Promise<void> {}

  async sizeBytes(): Promise<number> {
    const row = await this.sql.get<{ bytes: number }>('SELECT pg_database_size(current_database()) AS bytes');
    return row?.bytes ?? 0;
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.end().catch(() => {});
    await this.nameHolder?.end().catch(() => {});
    await this.pool.end();
  }

  /**
   * A connection of the pool for several statements. A checked-out client has no pool listener: a
   * server that ends the connection between two statements (a restart) would otherwise end the
   * process with an unhandled 'error'. The next statement then fails, and the connection is not
   * given back to the pool.
   */
  private async checkOut(): Promise<{ client: pg.PoolClient; lost(): void; release(): void }> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailable(err);
    }
    let broken = false;
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    return {
      client,
      lost,
      release: () => {
        client.off('error', lost);
        client.release(broken);
      },
    };
  }

  /** A statement of a chain outside any transaction (a transaction body must use its tx). */
  private async outside(sql: string, values?: unknown[]): Promise<pg.QueryResult> {
    this.scope.assertOutside('a statement on db.sql');
    return this.query(sql, values);
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, values);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Keeps one connection LISTENing; after a loss, re-opens it and tells subscribers they may have missed events. */
  private async listen(): Promise<void> {
    let lost = false;
    while (!this.closed) {
      const client = new pg.Client({ connectionString: this.options.url, application_name: 'vaa-listen' });
      const ended = new Promise<void>((resolve) => {
        client.on('end', resolve);
        client.on('error', () => resolve());
      });
      client.on('notification', (n) => this.events.emit('event', { type: 'notification', payload: n.payload ?? '' } satisfies DatabaseEvent));
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        this.listener = client;
        if (lost) {
          this.options.logger.info('database reachable again');
          this.events.emit('event', { type: 'reconnected' } satisfies DatabaseEvent);
        }
        // A close() while this connection was opening could not end it: it is ended below.
        if (!this.closed) await ended;
      } catch {
        // not reachable yet: try again below
      }
      this.listener = null;
      await client.end().catch(() => {});
      if (this.closed) return;
      if (!lost) this.options.logger.warn('lost the connection to the database; reconnecting');
      lost = true;
      await sleep(1000);
    }
  }
}

/** Errors that mean "the database is not reachable", not "the query is wrong". */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (err instanceof DatabaseUnavailableError) return true;
  const code = e?.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  // 08: connection exception; 57P01-3: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
  if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(e?.message ?? '');
}

function unavailable(err: unknown): unknown {
  return isUnavailable(err) && !(err instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError(err) : err;
}

function nameTaken(name: string): NameTakenError {
  return new NameTakenError(
    `NODE_ID "${name}" is in use by another running node of this service (it holds the name's lock in the database): give each node a NODE_ID of its own`,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
