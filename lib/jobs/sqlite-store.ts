// The job store of one box: SQLite (WAL) in DATA_DIR. One process owns the file, so its events
// are in-process and a start releases every lease the last run held.
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import { sharedMigrations } from './shared-migrations.js';
import { jobFromRow, runFinishHook, type Claim, type FinishHook, type Tx, type JobFailure, type JobRecord, type JobRow, type JobState, type JobStore, type NewJob, type StoreEvent } from './store.js';

/** Schema versions in order; `PRAGMA user_version` records how many have been applied. */
const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS jobs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     analytic TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     finished_at INTEGER,
     message TEXT NOT NULL,
     input TEXT NOT NULL,
     result TEXT,
     error TEXT
   );
   CREATE INDEX IF NOT EXISTS jobs_by_analytic ON jobs (analytic, seq DESC);
   CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (state) WHERE state IN ('queued', 'processing');`,
  `ALTER TABLE jobs ADD COLUMN started_at INTEGER;
   ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
   ALTER TABLE jobs ADD COLUMN lease_until INTEGER;`,
  ...sharedMigrations({ serial: 'INTEGER PRIMARY KEY AUTOINCREMENT', bigint: 'INTEGER' }),
];

export class SqliteJobStore implements JobStore {
  readonly backend = 'sqlite';
  readonly shared = false;
  private readonly db: Database.Database;
  private readonly events = new EventEmitter();
  private finishHook: { hook: FinishHook; onError: (err: unknown, job: JobRecord) => void } | null = null;
  /** The end of the last transaction queued: transactions run one after another. */
  private lastTransaction: Promise<unknown> = Promise.resolve();
  /** Statements of the transaction running now, for its body; the same outside one. */
  readonly sql: Tx = {
    all: async <T>(sql: string, ...params: unknown[]) => this.db.prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, ...params: unknown[]) => this.db.prepare(sql).get(...params) as T | undefined,
    run: async (sql: string, ...params: unknown[]) => this.db.prepare(sql).run(...params).changes,
  };

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.events.setMaxListeners(0);
  }

  /** The schema version the file is at (the number of MIGRATIONS applied). */
  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  private migrate(): void {
    this.db.transaction(() => {
      let version = this.schemaVersion;
      // A file of the first release has the jobs table but no version.
      if (version === 0 && this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'`).get()) version = 1;
      for (; version < MIGRATIONS.length; version++) this.db.exec(MIGRATIONS[version]);
      this.db.pragma(`user_version = ${version}`);
    })();
  }

  async insert(job: NewJob): Promise<JobRecord> {
    const row = this.db
      .prepare(
        `INSERT INTO jobs (id, analytic, state, attempts, created_at, message, input)
         VALUES (?, ?, 'queued', 0, ?, 'Queued', ?) RETURNING *`,
      )
      .get(job.id, job.analytic, job.createdAt ?? Date.now(), JSON.stringify(job.input)) as JobRow;
    this.emit({ type: 'queued' });
    return jobFromRow(row);
  }

  async get(id: string): Promise<JobRecord | null> {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row ? jobFromRow(row) : null;
  }

  async recent(analytic: string, limit: number, offset = 0): Promise<JobRecord[]> {
    const rows = this.db.prepare('SELECT * FROM jobs WHERE analytic = ? ORDER BY seq DESC LIMIT ? OFFSET ?').all(analytic, limit, offset) as JobRow[];
    return rows.map(jobFromRow);
  }

  async claim(owner: string, leaseMs: number): Promise<JobRecord | null> {
    const now = Date.now();
    const row = this.db
      .prepare(
        `UPDATE jobs SET state = 'processing', attempts = attempts + 1, message = 'Processing',
           lease_owner = ?, lease_until = ?, started_at = ?
         WHERE seq = (SELECT seq FROM jobs WHERE state IN ('queued', 'processing')
                        AND (state = 'queued' OR COALESCE(lease_until, 0) < ?) ORDER BY seq LIMIT 1)
         RETURNING *`,
      )
      .get(owner, now + leaseMs, now, now) as JobRow | undefined;
    return row ? jobFromRow(row) : null;
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    return this.fenced(claim, 'lease_until = ?', Date.now() + leaseMs);
  }

  async setMessage(claim: Claim, message: string): Promise<void> {
    this.fenced(claim, 'message = ?', message);
  }

  async complete(claim: Claim, message: string, result: Record<string, unknown>, at = Date.now()): Promise<boolean> {
    return this.finish(claim, `state = 'done', message = ?, result = ?, error = NULL, finished_at = ?`, message, JSON.stringify(result), at);
  }

  async fail(claim: Claim, failure: JobFailure, result: Record<string, unknown> | null = null, at = Date.now()): Promise<boolean> {
    return this.finish(
      claim,
      `state = 'failed', message = ?, error = ?, result = ?, finished_at = ?`,
      failure.message,
      JSON.stringify(failure),
      result ? JSON.stringify(result) : null,
      at,
    );
  }

  async requeue(claim: Claim, message: string): Promise<boolean> {
    const done = this.fenced(claim, `state = 'queued', message = ?, lease_owner = NULL, lease_until = NULL`, message);
    if (done) this.emit({ type: 'queued' });
    return done;
  }

  async releaseLeases(_owner: string): Promise<number> {
    return this.db.prepare(`UPDATE jobs SET lease_until = 0 WHERE state = 'processing'`).run().changes;
  }

  async unfinishedCount(): Promise<number> {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'processing')`).get() as { n: number }).n;
  }

  async countsByState(): Promise<{ analytic: string; state: JobState; count: number }[]> {
    return this.db.prepare('SELECT analytic, state, COUNT(*) AS count FROM jobs GROUP BY analytic, state').all() as {
      analytic: string;
      state: JobState;
      count: number;
    }[];
  }

  /** One process: a task of a name is already kept from running twice by its caller. */
  async exclusive(_name: string, task: () => Promise<void>): Promise<boolean> {
    await task();
    return true;
  }

  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    const run = this.lastTransaction.then(async () => {
      // Every statement is synchronous, so a body that awaits only `tx` runs to its end before any
      // other I/O callback: nothing of another request lands inside the transaction. (Two stores
      // on one file in one process could deadlock here: the service opens one.)
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const value = await body(this.sql);
        this.db.exec('COMMIT');
        return value;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
    this.lastTransaction = run.catch(() => {});
    return run;
  }

  onFinish(hook: FinishHook, onError: (err: unknown, job: JobRecord) => void = () => {}): void {
    this.finishHook = { hook, onError };
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.db.close();
  }

  private fenced(claim: Claim, set: string, ...values: unknown[]): boolean {
    const sql = `UPDATE jobs SET ${set} WHERE id = ? AND state = 'processing' AND attempts = ?`;
    return this.db.prepare(sql).run(...values, claim.id, claim.attempt).changes === 1;
  }

  private async finish(claim: Claim, set: string, ...values: unknown[]): Promise<boolean> {
    const finishHook = this.finishHook;
    if (!finishHook) {
      const done = this.fenced(claim, `${set}, lease_until = NULL`, ...values);
      if (done) this.emit({ type: 'finished', id: claim.id });
      return done;
    }
    const sql = `UPDATE jobs SET ${set}, lease_until = NULL WHERE id = ? AND state = 'processing' AND attempts = ? RETURNING *`;
    const done = await this.transaction(async (tx) => {
      const row = await tx.get<JobRow>(sql, ...values, claim.id, claim.attempt);
      if (!row) return false;
      await runFinishHook(tx, jobFromRow(row), finishHook.hook, finishHook.onError);
      return true;
    });
    if (done) this.emit({ type: 'finished', id: claim.id });
    return done;
  }

  private emit(event: StoreEvent): void {
    // Listeners run after the write's caller has its answer, as a remote notification would.
    queueMicrotask(() => this.events.emit('event', event));
  }
}
