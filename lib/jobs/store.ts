// The job store: the single source of truth for a job's state. HTTP reads it, the queue claims
// jobs from it and writes their outcomes, and a restart (or another node) resumes from it. Two
// implementations keep one behaviour: SQLite under DATA_DIR for one box (sqlite-store.ts) and
// PostgreSQL for several nodes as one service (pg-store.ts).
//
// A worker's hold on a job is a lease: `claim` counts an attempt and sets the lease's owner and
// expiry; the owner renews it while the job runs; a job whose lease ran out is claimable again.
// Every write about a running job names the attempt it belongs to, and only lands while that
// attempt still holds the job: a late result of an attempt that lost its lease changes nothing.

export type JobState = 'queued' | 'processing' | 'done' | 'failed';

export interface JobFailure {
  code: string;
  message: string;
}

export interface JobRecord {
  id: string;
  analytic: string;
  state: JobState;
  /** Times a worker has started this job; the current attempt while it is processing. */
  attempts: number;
  createdAt: number;
  finishedAt: number | null;
  /** Progress text while running; the completion text when done. */
  message: string;
  /** What the analytic needs: file paths, original names, parameters. */
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: JobFailure | null;
  /** When the current (or last) attempt started, ms. */
  startedAt: number | null;
  /** The node holding (or last holding) the job's lease. */
  leaseOwner: string | null;
}

/** One attempt's hold on a job: the fence every write about a running job carries. */
export interface Claim {
  id: string;
  attempt: number;
}

export interface NewJob {
  id: string;
  analytic: string;
  input: Record<string, unknown>;
  createdAt?: number;
}

export type StoreEvent = { type: 'queued' } | { type: 'finished'; id: string } | { type: 'reconnected' };

/**
 * Statements inside one transaction, in the SQL both backends speak alike: `?` placeholders,
 * times as integer milliseconds, no booleans. Integers may come back as strings (PostgreSQL
 * BIGINT): read them with Number().
 */
export interface Tx {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** The number of rows changed. */
  run(sql: string, ...params: unknown[]): Promise<number>;
}

/**
 * Runs in the transaction that records a job's outcome, after the job's row changed: what must
 * happen exactly when the job finishes (a camera's state, the events to deliver) commits with it
 * or not at all. It may only await `tx`. An error in it is logged and undone alone: the outcome
 * is still recorded.
 */
export type FinishHook = (tx: Tx, job: JobRecord) => Promise<void>;

export interface JobStore {
  /** 'sqlite' or 'postgres': what /healthz and the logs report. */
  readonly backend: string;
  /** The store is shared by several nodes: per-node duties (start-up clean-up) must not assume they are alone. */
  readonly shared: boolean;

  insert(job: NewJob): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | null>;
  /** `limit` jobs of an analytic, newest first, after skipping the `offset` newest. */
  recent(analytic: string, limit: number, offset?: number): Promise<JobRecord[]>;

  /**
   * Takes the oldest job that is queued or whose lease has run out: counts an attempt, sets the
   * lease to `owner` for `leaseMs`. Null when there is none. Two claimers never get the same attempt.
   */
  claim(owner: string, leaseMs: number): Promise<JobRecord | null>;
  /** Extends the lease; false when the attempt no longer holds the job (its lease ran out and another took it). */
  renew(claim: Claim, leaseMs: number): Promise<boolean>;
  setMessage(claim: Claim, message: string): Promise<void>;
  /** Each returns false, and changes nothing, when the attempt no longer holds the job. */
  complete(claim: Claim, message: string, result: Record<string, unknown>, at?: number): Promise<boolean>;
  fail(claim: Claim, failure: JobFailure, result?: Record<string, unknown> | null, at?: number): Promise<boolean>;
  /** Back to the queue (worker crashed, node stopping): any node may claim it at once. */
  requeue(claim: Claim, message: string): Promise<boolean>;
  /**
   * A node starts again: leases its previous run held are released, so its jobs run at once
   * instead of after the lease. One box's SQLite store releases every lease (it is the only owner).
   */
  releaseLeases(owner: string): Promise<number>;

  /** Jobs queued or processing, on every node: the queue depth QUEUE_LIMIT bounds. */
  unfinishedCount(): Promise<number>;
  /** Jobs by analytic and state (metrics). */
  countsByState(): Promise<{ analytic: string; state: JobState; count: number }[]>;
  /**
   * Runs `task` unless another node runs a task of the same name right now (then resolves false
   * without running it): duties such as the retention sweep run on one node at a time.
   */
  exclusive(name: string, task: () => Promise<void>): Promise<boolean>;

  /**
   * Runs `body` in one transaction: committed when it resolves, rolled back when it throws. On
   * PostgreSQL rows a body must serialise on are locked with SELECT ... FOR UPDATE; SQLite runs one
   * transaction at a time. The body may only await `tx`.
   */
  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T>;
  /** The same statements outside a transaction, each on its own (reads). */
  readonly sql: Tx;
  /** Sets the hook every complete() and fail() that lands runs in its transaction. */
  onFinish(hook: FinishHook, onError?: (err: unknown, job: JobRecord) => void): void;

  /** Jobs queued and finished anywhere; 'reconnected' after a lost connection (events may have been missed). */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /** Throws unless the database answers a query (health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The columns both backends store, as they come back from a query. */
export interface JobRow {
  id: string;
  analytic: string;
  state: JobState;
  attempts: number;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
  message: string;
  input: string;
  result: string | null;
  error: string | null;
  lease_owner: string | null;
}

export function jobFromRow(row: JobRow): JobRecord {
  return {
    id: row.id,
    analytic: row.analytic,
    state: row.state,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    message: row.message,
    input: JSON.parse(row.input),
    result: row.result ? JSON.parse(row.result) : null,
    error: row.error ? JSON.parse(row.error) : null,
    startedAt: row.started_at === null ? null : Number(row.started_at),
    leaseOwner: row.lease_owner,
  };
}

/** Runs a finish hook under a savepoint: its error undoes its own writes only, not the outcome. */
export async function runFinishHook(tx: Tx, job: JobRecord, hook: FinishHook, onError: (err: unknown, job: JobRecord) => void): Promise<void> {
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
