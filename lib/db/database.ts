// The database the appliance keeps its records in: a SQLite file for one box
// (sqlite-database.ts), a PostgreSQL pool for several nodes as one service (postgres-database.ts).
// This layer owns connections, transactions, notifications between nodes, per-module migrations
// (migrations.ts) and the few differences of the two dialects (dialect.ts). Every module writes
// each of its statements once, in the SQL both speak alike, and owns its tables: the jobs in
// lib/jobs/, cameras in lib/cameras/, stream sources in lib/sources/, the webhook outbox in
// lib/webhooks/, sessions in lib/sessions/ (docs/database.md).
import type { Dialect } from './dialect.js';
import type { SchemaModule } from './migrations.js';

/**
 * Statements in the SQL both backends speak alike: `?` placeholders, times as integer
 * milliseconds, no booleans. Integers come back as numbers from both (PostgreSQL's BIGINT too).
 */
export interface Tx {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** The number of rows changed. */
  run(sql: string, ...params: unknown[]): Promise<number>;
  /** Several statements without parameters (schema changes). */
  exec(sql: string): Promise<void>;
}

/** What a database tells its subscribers: another node's notification, or that some may have been missed. */
export type DatabaseEvent = { type: 'notification'; payload: string } | { type: 'reconnected' };

export interface Database {
  readonly dialect: Dialect;
  /** 'sqlite' or 'postgres': what /healthz and the logs report. */
  readonly backend: 'sqlite' | 'postgres';
  /** Several nodes share it: per-node duties (start-up clean-up) must not assume they are alone. */
  readonly shared: boolean;
  /** Statements outside a transaction, each on its own (reads, single writes). */
  readonly sql: Tx;

  /**
   * Runs `body` in one transaction: committed when it resolves, rolled back when it throws. On
   * PostgreSQL, rows a body must serialise on are locked (SELECT ... FOR UPDATE, or an UPDATE
   * first); SQLite runs one transaction at a time. The body may only await `tx`.
   */
  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T>;

  /** Brings each module's tables to its newest version, all of them under one lock. */
  migrate(modules: SchemaModule[]): Promise<void>;

  /**
   * Runs `task` unless another node runs a task of the same name right now (then resolves false
   * without running it): duties such as the retention sweep run on one node at a time.
   */
  exclusive(name: string, task: () => Promise<void>): Promise<boolean>;

  /**
   * Holds `name` for this process until close(): throws NameTakenError when a live process holds
   * it already (two nodes started with one NODE_ID). A process that dies lets go of it.
   */
  holdName(name: string): Promise<void>;

  /** Tells every node's subscribers (this one's too), once the write it follows has committed. */
  notify(payload: string): Promise<void>;
  subscribe(listener: (event: DatabaseEvent) => void): () => void;

  /** Frees the space of deleted rows where the backend can (SQLite's incremental vacuum), in small steps. */
  reclaimSpace(): Promise<void>;
  /** Bytes the database takes on disk (benchmarks). */
  sizeBytes(): Promise<number>;

  /** Throws unless the database answers a query (health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
