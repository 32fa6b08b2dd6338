// The job store of several nodes as one service: PostgreSQL, through a `pg` pool. Claims take the
// oldest claimable row with FOR UPDATE SKIP LOCKED, so concurrent claimers never wait on each
// other nor get the same attempt; lease times come from the database's clock, so nodes' clocks
// need not agree. Inserts and finishes NOTIFY the other nodes (LISTEN on a connection of its own,
// re-opened when lost); the queue also polls, so a missed notification only delays.
//
// A NOTIFY is sent after the write it announces has committed, in a transaction of its own that
// does not wait for the disk: PostgreSQL holds a server-wide lock from a notifying commit until
// that commit is flushed, so notifying inside the job's own transaction would keep commits from
// sharing a flush (measured: 1895 plain commits/s against 281 notifying ones on 16 connections).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import { StoreUnavailableError } from './errors.js';
import { sharedMigrations } from './shared-migrations.js';
import { jobFromRow, runFinishHook, type Claim, type FinishHook, type Tx, type JobFailure, type JobRecord, type JobRow, type JobState, type JobStore, type NewJob, type StoreEvent } from './store.js';

const CHANNEL = 'vaa_jobs';
/** Milliseconds since the epoch on the database's clock. */
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;
/** Serialises migrations of nodes starting together (any constant unique to this service). */
const MIGRATION_LOCK = 0x7661616d; // "vaam", within a JavaScript number's exact range

/** Schema versions in order; `schema_version` holds how many have been applied. */
const MIGRATIONS = [
  `CREATE TABLE jobs (
     seq BIGSERIAL PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     analytic TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     created_at BIGINT NOT NULL,
     started_at BIGINT,
     finished_at BIGINT,
     message TEXT NOT NULL,
     input TEXT NOT NULL,
     result TEXT,
     error TEXT,
     lease_owner TEXT,
     lease_until BIGINT
   );
   CREATE INDEX jobs_by_analytic ON jobs (analytic, seq DESC);
   CREATE INDEX jobs_unfinished ON jobs (seq) WHERE state IN ('queued', 'processing');`,
  ...sharedMigrations({ serial: 'BIGSERIAL PRIMARY KEY', bigint: 'BIGINT' }),
];

export interface PgStoreOptions {
  url: string;
  logger: Logger;
  /** Connections this node opens for queries (plus one for LISTEN). @defaultValue 10 */
  poolSize?: number;
  /** How long start-up waits for the database to answer. @defaultValue 30 s */
  startTimeoutMs?: number;
}

export class PgJobStore implements JobStore {
  readonly backend = 'postgres';
  readonly shared = true;
  private readonly events = new EventEmitter();
  private listener: pg.Client | null = null;
  private closed = false;
  private finishHook: { hook: FinishHook; onError: (err: unknown, job: JobRecord) => void } | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgStoreOptions,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Connects (waiting up to startTimeoutMs for the database), migrates the schema, and starts listening. */
  static async open(options: PgStoreOptions): Promise<PgJobStore> {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
      // Opening a connection costs 20-30 ms: idle ones are kept for a while.
      idleTimeoutMillis: 10 * 60_000,
      application_name: 'vaa',
    });
    // An idle connection the server closed (restart) is dropped by the pool; without a listener
    // its 'error' would end the process.
    pool.on('error', (err) => options.logger.warn({ err: err.message }, 'a database connection was lost'));
    const store = new PgJobStore(pool, options);
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    for (;;) {
      try {
        await store.migrate();
        break;
      } catch (err) {
        if (!isUnavailable(err) || Date.now() > deadline) {
          await pool.end();
          throw err;
        }
        options.logger.warn({ err: (err as Error).message }, 'waiting for the job database');
        await sleep(1000);
      }
    }
    // The pool's connections open now rather than under the first requests (20-30 ms each).
    await Promise.all(Array.from({ length: options.poolSize ?? 10 }, () => pool.query('SELECT 1'))).catch(() => {});
    void store.listen();
    return store;
  }

  /** The schema version the database is at. */
  async schemaVersion(): Promise<number> {
    const { rows } = await this.query<{ version: number }>('SELECT version FROM schema_version');
    return rows[0]?.version ?? 0;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_version');
      if (rows.length === 0) await client.query('INSERT INTO schema_version (version) VALUES (0)');
      let version = rows[0]?.version ?? 0;
      if (version > MIGRATIONS.length) throw new Error(`the job database is at schema version ${version}, newer than this service (${MIGRATIONS.length})`);
      for (; version < MIGRATIONS.length; version++) await client.query(MIGRATIONS[version]);
      await client.query('UPDATE schema_version SET version = $1', [version]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async insert(job: NewJob): Promise<JobRecord> {
    const { rows } = await this.query<JobRow>(
      `INSERT INTO jobs (id, analytic, state, attempts, created_at, message, input)
       VALUES ($1, $2, 'queued', 0, $3, 'Queued', $4) RETURNING *`,
      [job.id, job.analytic, job.createdAt ?? Date.now(), JSON.stringify(job.input)],
    );
    await this.notify('queued');
    return jobFromRow(rows[0]);
  }

  async get(id: string): Promise<JobRecord | null> {
    const { rows } = await this.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
    return rows[0] ? jobFromRow(rows[0]) : null;
  }

  async recent(analytic: string, limit: number, offset = 0): Promise<JobRecord[]> {
    const { rows } = await this.query<JobRow>('SELECT * FROM jobs WHERE analytic = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3', [analytic, limit, offset]);
    return rows.map(jobFromRow);
  }

  async claim(owner: string, leaseMs: number): Promise<JobRecord | null> {
    const { rows } = await this.query<JobRow>(
      `WITH next AS (
         SELECT seq FROM jobs WHERE state IN ('queued', 'processing')
           AND (state = 'queued' OR COALESCE(lease_until, 0) < ${NOW_MS})
         ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE jobs j SET state = 'processing', attempts = j.attempts + 1, message = 'Processing',
         lease_owner = $1, lease_until = ${NOW_MS} + $2, started_at = ${NOW_MS}
       FROM next WHERE j.seq = next.seq RETURNING j.*`,
      [owner, leaseMs],
    );
    return rows[0] ? jobFromRow(rows[0]) : null;
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    return this.fenced(claim, `lease_until = ${NOW_MS} + $3`, [leaseMs]);
  }

  /**
   * Progress is committed without waiting for the disk: a message lost in a crash of the database
   * is replaced by the next one, and the job's flushes drop from six to three.
   */
  async setMessage(claim: Claim, message: string): Promise<void> {
    await this.query(
      `WITH lazy AS (SELECT set_config('synchronous_commit', 'off', true))
       UPDATE jobs SET message = $3 FROM lazy WHERE id = $1 AND state = 'processing' AND attempts = $2`,
      [claim.id, claim.attempt, message],
    );
  }

  async complete(claim: Claim, message: string, result: Record<string, unknown>, at = Date.now()): Promise<boolean> {
    return this.finish(claim, `state = 'done', message = $3, result = $4, error = NULL, finished_at = $5`, [message, JSON.stringify(result), at]);
  }

  async fail(claim: Claim, failure: JobFailure, result: Record<string, unknown> | null = null, at = Date.now()): Promise<boolean> {
    return this.finish(claim, `state = 'failed', message = $3, error = $4, result = $5, finished_at = $6`, [
      failure.message,
      JSON.stringify(failure),
      result ? JSON.stringify(result) : null,
      at,
    ]);
  }

  async requeue(claim: Claim, message: string): Promise<boolean> {
    return this.fenced(claim, `state = 'queued', message = $3, lease_owner = NULL, lease_until = NULL`, [message], 'queued');
  }

  async releaseLeases(owner: string): Promise<number> {
    const { rowCount } = await this.query(`UPDATE jobs SET lease_until = 0 WHERE state = 'processing' AND lease_owner = $1`, [owner]);
    if (rowCount) await this.notify('queued');
    return rowCount ?? 0;
  }

  async unfinishedCount(): Promise<number> {
    const { rows } = await this.query<{ n: string }>(`SELECT COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'processing')`);
    return Number(rows[0].n);
  }

  async countsByState(): Promise<{ analytic: string; state: JobState; count: number }[]> {
    const { rows } = await this.query<{ analytic: string; state: JobState; count: string }>(
      'SELECT analytic, state, COUNT(*) AS count FROM jobs GROUP BY analytic, state',
    );
    return rows.map((r) => ({ analytic: r.analytic, state: r.state, count: Number(r.count) }));
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

  async transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    const held = await this.checkOut();
    try {
      await held.client.query('BEGIN');
      const value = await body(clientTx(held.client));
      await held.client.query('COMMIT');
      return value;
    } catch (err) {
      await held.client.query('ROLLBACK').catch(() => held.lost());
      throw unavailable(err);
    } finally {
      held.release();
    }
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

  readonly sql: Tx = {
    all: async <T>(sql: string, ...params: unknown[]) => (await this.query(numbered(sql), params)).rows as T[],
    get: async <T>(sql: string, ...params: unknown[]) => (await this.query(numbered(sql), params)).rows[0] as T | undefined,
    run: async (sql: string, ...params: unknown[]) => (await this.query(numbered(sql), params)).rowCount ?? 0,
  };

  onFinish(hook: FinishHook, onError: (err: unknown, job: JobRecord) => void = () => {}): void {
    this.finishHook = { hook, onError };
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.end().catch(() => {});
    await this.pool.end();
  }

  private async fenced(claim: Claim, set: string, values: unknown[], notify?: string): Promise<boolean> {
    const update = `UPDATE jobs SET ${set} WHERE id = $1 AND state = 'processing' AND attempts = $2`;
    const { rowCount } = await this.query(update, [claim.id, claim.attempt, ...values]);
    if (rowCount === 1 && notify) await this.notify(notify);
    return rowCount === 1;
  }

  private async finish(claim: Claim, set: string, values: unknown[]): Promise<boolean> {
    const finishHook = this.finishHook;
    if (!finishHook) return this.fenced(claim, `${set}, lease_until = NULL`, values, `finished:${claim.id}`);
    const sql = `UPDATE jobs SET ${set}, lease_until = NULL WHERE id = $1 AND state = 'processing' AND attempts = $2 RETURNING *`;
    const done = await this.transaction(async (tx) => {
      const { rows } = await (tx as PgTx).client.query<JobRow>(sql, [claim.id, claim.attempt, ...values]);
      if (!rows[0]) return false;
      await runFinishHook(tx, jobFromRow(rows[0]), finishHook.hook, finishHook.onError);
      return true;
    });
    if (done) await this.notify(`finished:${claim.id}`);
    return done;
  }

  /**
   * Tells the listening nodes, once the write is committed. A notification lost with the
   * connection or a crash only delays a claim or a wait until the next poll.
   */
  private async notify(payload: string): Promise<void> {
    try {
      // One statement, its own transaction; set_config(..., true) lasts until its commit.
      await this.pool.query(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [CHANNEL, payload]);
    } catch (err) {
      this.options.logger.debug({ err: (err as Error).message }, 'a job notification was not sent');
    }
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
      client.on('notification', (n) => {
        const payload = n.payload ?? '';
        if (payload === 'queued') this.events.emit('event', { type: 'queued' } satisfies StoreEvent);
        else if (payload.startsWith('finished:')) this.events.emit('event', { type: 'finished', id: payload.slice(9) } satisfies StoreEvent);
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        this.listener = client;
        if (lost) {
          this.options.logger.info('job database reachable again');
          this.events.emit('event', { type: 'reconnected' } satisfies StoreEvent);
        }
        // A close() while this connection was opening could not end it: it is ended below.
        if (!this.closed) await ended;
      } catch {
        // not reachable yet: try again below
      }
      this.listener = null;
      await client.end().catch(() => {});
      if (this.closed) return;
      if (!lost) this.options.logger.warn('lost the connection to the job database; reconnecting');
      lost = true;
      await sleep(1000);
    }
  }
}

interface PgTx extends Tx {
  client: pg.PoolClient;
}

/** `?` placeholders become PostgreSQL's `$n` (no statement here has a `?` inside a string). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function clientTx(client: pg.PoolClient): PgTx {
  return {
    client,
    all: async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows as T[],
    get: async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows[0] as T | undefined,
    run: async (sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rowCount ?? 0,
  };
}

/** Errors that mean "the database is not reachable", not "the query is wrong". */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (err instanceof StoreUnavailableError) return true;
  const code = e?.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  // 08: connection exception; 57P01-3: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
  if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(e?.message ?? '');
}

function unavailable(err: unknown): unknown {
  return isUnavailable(err) && !(err instanceof StoreUnavailableError) ? new StoreUnavailableError(err) : err;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
