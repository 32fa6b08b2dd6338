// The job store: the single source of truth for a job's state. HTTP reads it, the queue claims
// jobs from it and writes their outcomes, and a restart (or another node) resumes from it. Every
// statement of the jobs module is here, written once for both backends (lib/db/), and the jobs
// tables' migrations are in schema.ts.
//
// A worker's hold on a job is a lease: `claim` counts an attempt and sets the lease's owner and
// expiry; the owner renews it while the job runs; a job whose lease ran out is claimable again.
// Every write about a running job names the attempt it belongs to, and only lands while that
// attempt still holds the job: a late result of an attempt that lost its lease changes nothing.
import type { FramesProgress } from './analytic.js';
import type { Database, Tx } from '../db/database.js';
import { jobFromRow, type Claim, type JobFailure, type JobRecord, type JobRow, type JobState, type NewJob } from './job-record.js';

/** One attempt's hold on a job: the fence every write about a running job carries. */

export type StoreEvent = { type: 'queued' } | { type: 'finished'; id: string } | { type: 'reconnected' };

/**
 * Runs in the transaction that records a job's outcome, after the job's row changed: what must
 * happen exactly when the job finishes (a camera's state, the events to deliver) commits with it
 * or not at all. It may only await `tx`.
 */

export type FinishHook = (tx: Tx, job: JobRecord) => Promise<void>;

/** Runs in the transaction that deletes old records, with their ids: what points at them goes too. */

export type PurgeHook = (tx: Tx, jobIds: string[]) => Promise<void>;

export interface FinishOptions {
  report?: Record<string, unknown> | null;
  /**
   * Makes the run's result files visible, once the outcome's row is written and before it
   * commits: a run that lost its lease never publishes over the run that took the job over. It
   * must be synchronous (SQLite's transaction may not wait for other I/O).
   */
  publish?: () => void;
}

/** A submission's Idempotency-Key, per owner (the credentials' user); a key given before `since` has expired. */

export interface IdempotencyKey {
  owner: string;
  key: string;
  since: number;
}

export interface InsertOptions {
  alongside?: (tx: Tx) => Promise<void>;
  idempotencyKey?: IdempotencyKey;
}

/** The idempotency key was given to an earlier submission, whose job this is. */

export class DuplicateSubmissionError extends Error {
  constructor(readonly jobId: string) {
    super(`the Idempotency-Key was used by job ${jobId}`);
  }
}

/** The columns as they come back from a query. */

const UNFINISHED = `state IN ('queued', 'processing')`;

export class JobStore {
  private finishHooks: { hook: FinishHook; onError: (err: unknown, job: JobRecord) => void }[] = [];
  private purgeHooks: PurgeHook[] = [];

  /** The jobs of `db`, whose tables the service has migrated (lib/service.ts). */
  constructor(private readonly db: Database) {}

  /**
   * Records a new queued job. `alongside` writes what must exist exactly when the job does (a
   * camera's new reference, its pending check) in the same transaction. With an idempotency key
   * that an earlier submission of the same owner holds (younger than `since`), nothing is
   * written and DuplicateSubmissionError names that submission's job.
   */
  async insert(job: NewJob, options: InsertOptions = {}): Promise<JobRecord> {
    const createdAt = job.createdAt ?? Date.now();
    const row = await this.db.transaction(async (tx) => {
      const inserted = await tx.get<JobRow>(
        `INSERT INTO jobs (id, analytic, state, attempts, created_at, message, input)
         VALUES (?, ?, 'queued', 0, ?, 'Queued', ?) RETURNING *`,
        job.id,
        job.analytic,
        createdAt,
        JSON.stringify(job.input),
      );
      const key = options.idempotencyKey;
      if (key) {
        // A key older than the window is taken over; a live one keeps its job, and this insert is undone.
        const taken = await tx.run(
          `INSERT INTO job_idempotency_keys (owner, idempotency_key, job_id, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (owner, idempotency_key) DO UPDATE SET job_id = excluded.job_id, created_at = excluded.created_at
           WHERE job_idempotency_keys.created_at < ?`,
          key.owner,
          key.key,
          job.id,
          createdAt,
          key.since,
        );
        if (taken === 0) {
          const first = await tx.get<{ job_id: string }>('SELECT job_id FROM job_idempotency_keys WHERE owner = ? AND idempotency_key = ?', key.owner, key.key);
          throw new DuplicateSubmissionError(first!.job_id);
        }
      }
      await options.alongside?.(tx);
      return inserted!;
    });
    await this.db.notify('queued');
    return jobFromRow(row);
  }

  /** The job an idempotency key names, when it was given after its `since`. */
  async jobOfIdempotencyKey({ owner, key, since }: IdempotencyKey): Promise<JobRecord | null> {
    const row = await this.db.sql.get<JobRow>(
      `SELECT j.* FROM job_idempotency_keys k JOIN jobs j ON j.id = k.job_id
        WHERE k.owner = ? AND k.idempotency_key = ? AND k.created_at >= ?`,
      owner,
      key,
      since,
    );
    return row ? jobFromRow(row) : null;
  }

  /** Deletes idempotency keys given before `before`; resolves with how many. */
  async forgetIdempotencyKeys(before: number): Promise<number> {
    return this.db.sql.run('DELETE FROM job_idempotency_keys WHERE created_at < ?', before);
  }

  async get(id: string): Promise<JobRecord | null> {
    const row = await this.db.sql.get<JobRow>('SELECT * FROM jobs WHERE id = ?', id);
    return row ? jobFromRow(row) : null;
  }

  /**
   * `limit` jobs of an analytic (or of several, as one list), newest first, after skipping the
   * `offset` newest. The skipped ones are counted in the index alone, without reading their rows.
   */
  async recent(analytic: string | readonly string[], limit: number, offset = 0): Promise<JobRecord[]> {
    const names = typeof analytic === 'string' ? [analytic] : [...new Set(analytic)];
    if (names.length === 0) return [];
    let rows: JobRow[];
    if (names.length === 1) {
      rows = await this.db.sql.all<JobRow>(
        `SELECT * FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE analytic = ? ORDER BY seq DESC LIMIT ? OFFSET ?) ORDER BY seq DESC`,
        names[0],
        limit,
        offset,
      );
    } else {
      // Each analytic's newest `limit + offset` from its own index range, then the page of their
      // union: an IN list over the analytics would sort every row of them instead.
      const each = names.map((_, i) => `SELECT seq FROM (SELECT seq FROM jobs WHERE analytic = ? ORDER BY seq DESC LIMIT ?) AS a${i}`);
      rows = await this.db.sql.all<JobRow>(
        `SELECT * FROM jobs WHERE seq IN (SELECT seq FROM (${each.join(' UNION ALL ')}) AS u ORDER BY seq DESC LIMIT ? OFFSET ?) ORDER BY seq DESC`,
        ...names.flatMap((name) => [name, limit + offset]),
        limit,
        offset,
      );
    }
    return rows.map(jobFromRow);
  }

  /**
   * Takes the oldest job that is queued or whose lease has run out: counts an attempt, sets the
   * lease to `owner` for `leaseMs`. Null when there is none. Two claimers never get the same
   * attempt (PostgreSQL: the row is locked, and others skip it; SQLite: one writer at a time).
   */
  async claim(owner: string, leaseMs: number): Promise<JobRecord | null> {
    const d = this.db.dialect;
    const row = await this.db.sql.get<JobRow>(
      `UPDATE jobs SET state = 'processing', attempts = attempts + 1, message = 'Processing', progress = NULL,
         lease_owner = ?, lease_until = ${d.nowMs} + ?, started_at = ${d.nowMs}
       WHERE seq = (SELECT seq FROM jobs WHERE ${UNFINISHED}
                      AND (state = 'queued' OR COALESCE(lease_until, 0) < ${d.nowMs})
                    ORDER BY seq LIMIT 1${d.skipLocked})
       RETURNING *`,
      owner,
      leaseMs,
    );
    return row ? jobFromRow(row) : null;
  }

  /** Extends the lease; false when the attempt no longer holds the job (its lease ran out and another took it). */
  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    return this.fenced(claim, `lease_until = ${this.db.dialect.nowMs} + ?`, leaseMs);
  }

  /** Progress: a message lost in a crash of the database is replaced by the next one, so its commit waits for no disk. */
  async setMessage(claim: Claim, message: string, frames?: (FramesProgress & { from?: { done: number; at: number } }) | null, at = Date.now()): Promise<void> {
    await this.db.sql.run(
      `UPDATE jobs SET message = ?, progress = COALESCE(?, progress) WHERE id = ? AND state = 'processing' AND attempts = ? AND ${this.db.dialect.lazyCommit}`,
      message,
      frames ? JSON.stringify({ done: frames.done, total: frames.total, at, from: frames.from }) : null,
      claim.id,
      claim.attempt,
    );
  }

  /** Each returns false, and changes nothing, when the attempt no longer holds the job. */
  async complete(claim: Claim, message: string, result: Record<string, unknown>, options: FinishOptions = {}, at = Date.now()): Promise<boolean> {
    return this.finish(claim, options, `state = 'done', message = ?, result = ?, error = NULL, report = ?, finished_at = ?`, message, JSON.stringify(result), json(options.report), at);
  }

  async fail(claim: Claim, failure: JobFailure, result: Record<string, unknown> | null = null, options: FinishOptions = {}, at = Date.now()): Promise<boolean> {
    return this.finish(
      claim,
      options,
      `state = 'failed', message = ?, error = ?, result = ?, report = ?, finished_at = ?`,
      failure.message,
      JSON.stringify(failure),
      json(result),
      json(options.report),
      at,
    );
  }

  /** Back to the queue (worker crashed, node stopping): any node may claim it at once. */
  async requeue(claim: Claim, message: string): Promise<boolean> {
    const done = await this.fenced(claim, `state = 'queued', message = ?, lease_owner = NULL, lease_until = NULL`, message);
    if (done) await this.db.notify('queued');
    return done;
  }

  /**
   * A node starts again: leases its previous run held are released, so its jobs run at once
   * instead of after the lease. One box's SQLite store releases every lease (it is the only owner).
   */
  async releaseLeases(owner: string): Promise<number> {
    const released = this.db.shared
      ? await this.db.sql.run(`UPDATE jobs SET lease_until = 0 WHERE state = 'processing' AND lease_owner = ?`, owner)
      : await this.db.sql.run(`UPDATE jobs SET lease_until = 0 WHERE state = 'processing'`);
    if (released > 0) await this.db.notify('queued');
    return released;
  }

  /** Jobs queued or processing, on every node: the queue depth QUEUE_LIMIT bounds. Read from the partial index of unfinished jobs. */
  async unfinishedCount(): Promise<number> {
    const row = await this.db.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE ${UNFINISHED}`);
    return row?.n ?? 0;
  }

  /**
   * Jobs by analytic and state (metrics): the unfinished ones counted through their partial
   * index, the finished ones from the totals kept as each finishes (records deleted by retention
   * stay counted).
   */
  async countsByState(): Promise<{ analytic: string; state: JobState; count: number }[]> {
    // Unfinished rows (at most QUEUE_LIMIT) are read in seq order, so that the partial index serves
    // them; a GROUP BY would lead SQLite's planner to walk jobs_by_analytic, every row of the table.
    const unfinished = await this.db.sql.all<{ analytic: string; state: JobState }>(`SELECT analytic, state FROM jobs WHERE ${UNFINISHED} ORDER BY seq`);
    const counts = new Map<string, { analytic: string; state: JobState; count: number }>();
    for (const r of unfinished) {
      const key = `${r.analytic}\0${r.state}`;
      const c = counts.get(key) ?? counts.set(key, { analytic: r.analytic, state: r.state, count: 0 }).get(key)!;
      c.count++;
    }
    const totals = await this.db.sql.all<{ analytic: string; state: JobState; count: number }>(
      'SELECT analytic, state, CAST(SUM(count) AS BIGINT) AS count FROM job_totals GROUP BY analytic, state ORDER BY analytic, state',
    );
    const sorted = [...counts.values()].sort((a, b) => a.analytic.localeCompare(b.analytic) || a.state.localeCompare(b.state));
    return [...sorted, ...totals];
  }

  /**
   * Adds a hook every complete() and fail() that lands runs in its transaction, each under a
   * savepoint of its own: one that fails is undone alone and reported to `onError`; the outcome
   * and the other hooks' writes still commit.
   */
  onFinish(hook: FinishHook, onError: (err: unknown, job: JobRecord) => void = () => {}): void {
    this.finishHooks.push({ hook, onError });
  }

  /** Adds a hook the record retention runs with the ids of each batch it deletes. */
  onPurge(hook: PurgeHook): void {
    this.purgeHooks.push(hook);
  }

  /**
   * Deletes up to `batch` finished jobs that finished before `before`, oldest first, except the
   * newest `keep` of each analytic (the history contract), with what points at them (onPurge).
   * Resolves with how many it deleted: 0 when none is left.
   */
  async purgeFinished(before: number, keep: number, batch: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      // The newest `keep` of each analytic have a seq at or above its floor.
      const floors = new Map<string, number>();
      for (const { analytic } of await tx.all<{ analytic: string }>('SELECT DISTINCT analytic FROM job_totals')) {
        const floor = await tx.get<{ seq: number }>('SELECT seq FROM jobs WHERE analytic = ? ORDER BY seq DESC LIMIT 1 OFFSET ?', analytic, keep - 1);
        floors.set(analytic, floor ? floor.seq : -Infinity);
      }
      // The oldest finished, through jobs_by_finish alone; the kept ones among them (at most
      // `keep` per analytic) are skipped here, so the batch still fills.
      const oldest = await tx.all<{ id: string; analytic: string; seq: number }>(
        'SELECT id, analytic, seq FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?',
        before,
        batch + keep * floors.size,
      );
      const ids = oldest.filter((r) => r.seq < (floors.get(r.analytic) ?? Infinity)).slice(0, batch).map((r) => r.id);
      if (ids.length === 0) return 0;
      for (const hook of this.purgeHooks) await hook(tx, ids);
      await tx.run(`DELETE FROM jobs WHERE id IN (${ids.map(() => '?').join(', ')})`, ...ids);
      return ids.length;
    });
  }

  /** Jobs queued and finished anywhere; 'reconnected' after a lost connection (events may have been missed). */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.db.subscribe((event) => {
      if (event.type === 'reconnected') listener({ type: 'reconnected' });
      else if (event.payload === 'queued') listener({ type: 'queued' });
      else if (event.payload.startsWith('finished:')) listener({ type: 'finished', id: event.payload.slice(9) });
    });
  }

  private async fenced(claim: Claim, set: string, ...values: unknown[]): Promise<boolean> {
    const sql = `UPDATE jobs SET ${set} WHERE id = ? AND state = 'processing' AND attempts = ?`;
    return (await this.db.sql.run(sql, ...values, claim.id, claim.attempt)) === 1;
  }

  private async finish(claim: Claim, options: FinishOptions, set: string, ...values: unknown[]): Promise<boolean> {
    const sql = `UPDATE jobs SET ${set}, lease_until = NULL WHERE id = ? AND state = 'processing' AND attempts = ? RETURNING *`;
    const done = await this.db.transaction(async (tx) => {
      const row = await tx.get<JobRow>(sql, ...values, claim.id, claim.attempt);
      if (!row) return false;
      const job = jobFromRow(row);
      for (const { hook, onError } of this.finishHooks) await runFinishHook(tx, job, hook, onError);
      // Counted per node, so that nodes finishing jobs at once do not wait on one row.
      await tx.run(
        `INSERT INTO job_totals (analytic, state, node, count) VALUES (?, ?, ?, 1)
         ON CONFLICT (analytic, state, node) DO UPDATE SET count = job_totals.count + 1`,
        job.analytic,
        job.state,
        job.leaseOwner ?? '',
      );
      options.publish?.();
      return true;
    });
    if (done) await this.db.notify(`finished:${claim.id}`);
    return done;
  }
}

function json(value: Record<string, unknown> | null | undefined): string | null {
  return value ? JSON.stringify(value) : null;
}

/** Runs a finish hook under a savepoint: its error undoes its own writes only, not the outcome. */
async function runFinishHook(tx: Tx, job: JobRecord, hook: FinishHook, onError: (err: unknown, job: JobRecord) => void): Promise<void> {
  await tx.run('SAVEPOINT finish_hook');
  try {
    await hook(tx, job);
    await tx.run('RELEASE SAVEPOINT finish_hook');
  } catch (err) {
    // A lost connection fails these too: the transaction, and the outcome with it, is then retried.
    await tx.run('ROLLBACK TO SAVEPOINT finish_hook');
    await tx.run('RELEASE SAVEPOINT finish_hook');
    onError(err, job);
  }
}

/**
 * The inputs of a module's unfinished jobs of `analytic`, read in a migration's transaction: a
 * migration of another module reads the jobs through here, not through the table.
 */
export async function unfinishedJobInputs(tx: Tx, analytic: string): Promise<{ id: string; input: string }[]> {
  return tx.all<{ id: string; input: string }>(`SELECT id, input FROM jobs WHERE analytic = ? AND ${UNFINISHED}`, analytic);
}
