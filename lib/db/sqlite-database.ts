// The database of one box: a SQLite file (WAL) under DATA_DIR. One process owns the file, so
// notifications stay in the process. Freed pages go back to the file system in small steps
// (incremental vacuum), and the WAL is cut back after checkpoints (journal_size_limit).
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import BetterSqlite from 'better-sqlite3';
import type { Database, DatabaseEvent, Tx } from './database.js';
import { sqliteDialect } from './dialect.js';
import { NameTakenError } from './errors.js';
import { applyMigrations, type SchemaModule } from './migrations.js';
import { bodyTx, TransactionScope } from './transaction-scope.js';

/** SQLite's auto_vacuum mode that frees pages on request (PRAGMA incremental_vacuum). */
const AUTO_VACUUM_INCREMENTAL = 2;
/** Pages freed by one step of reclaimSpace: 4 MiB of 4 KiB pages, a few ms of work. */
const VACUUM_STEP_PAGES = 1024;
/** The WAL file is cut back to this after a checkpoint (it grows with a big delete). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export class SqliteDatabase implements Database {
  readonly dialect = sqliteDialect;
  readonly backend = 'sqlite';
  readonly shared = false;
  private readonly db: BetterSqlite.Database;
  private readonly events = new EventEmitter();
  /** The end of the last transaction queued: transactions run one after another. */
  private lastTransaction: Promise<unknown> = Promise.resolve();
  /**
   * A transaction holds the one connection from its BEGIN to its COMMIT or ROLLBACK, awaiting
   * between its statements. A statement of another chain that ran then would run inside it, and
   * be undone with it though its caller was told it succeeded: such a statement waits its turn.
   */
  private transactionOpen = false;
  private readonly scope = new TransactionScope();
  private ownerFile: string | null = null;

  /** The connection's statements as they are: a transaction body's, in its turn. */
  private readonly direct: Tx = {
    all: async <T>(sql: string, ...params: unknown[]) => this.db.prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, ...params: unknown[]) => this.db.prepare(sql).get(...params) as T | undefined,
    run: async (sql: string, ...params: unknown[]) => this.db.prepare(sql).run(...params).changes,
    exec: async (sql: string) => void this.db.exec(sql),
  };

  /** Outside any transaction a statement runs at once; while one is open, after it. */
  readonly sql: Tx = {
    all: <T>(sql: string, ...params: unknown[]) => this.outside(() => this.db.prepare(sql).all(...params) as T[]),
    get: <T>(sql: string, ...params: unknown[]) => this.outside(() => this.db.prepare(sql).get(...params) as T | undefined),
    run: (sql: string, ...params: unknown[]) => this.outside(() => this.db.prepare(sql).run(...params).changes),
    exec: (sql: string) => this.outside(() => void this.db.exec(sql)),
  };

  constructor(readonly file: string) {
    this.db = new BetterSqlite(file);
    this.db.pragma('busy_timeout = 5000');
    this.useIncrementalVacuum();
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    this.events.setMaxListeners(0);
  }

  /**
   * A new file frees pages on request from the start; a file of an earlier release is rewritten
   * once (VACUUM, at its first start on this release) to do so.
   */
  private useIncrementalVacuum(): void {
    if (this.db.pragma('auto_vacuum', { simple: true }) === AUTO_VACUUM_INCREMENTAL) return;
    this.db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
    const hasTables = this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table'`).get();
    if (hasTables) this.db.exec('VACUUM');
  }

  /** The single version of the releases before schema_modules: user_version, 1 for the first release's file. */
  private legacyLevel(): number {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > 0) return version;
    return this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'`).get() ? 1 : 0;
  }

  async migrate(modules: SchemaModule[]): Promise<void> {
    const level = this.legacyLevel();
    await this.transaction((tx) => applyMigrations(tx, this.dialect, modules, level));
  }

  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      this.scope.assertOutside('a transaction');
    } catch (err) {
      return Promise.reject(err);
    }
    return this.inTurn(async () => {
      // Every statement is synchronous, so a body that awaits only `tx` runs to its end before any
      // I/O callback; other chains' statements wait for its end (outside()). (Two databases on
      // one file in one process could deadlock here: the service opens one.)
      this.db.exec('BEGIN IMMEDIATE');
      this.transactionOpen = true;
      const own = bodyTx(this.direct);
      const end = () => {
        own.end();
        this.transactionOpen = false;
      };
      return this.scope.run(() => body(own.tx), {
        commit: () => {
          this.db.exec('COMMIT');
          end();
        },
        rollback: () => {
          end();
          if (this.db.inTransaction) this.db.exec('ROLLBACK');
        },
      });
    });
  }

  /**
   * Runs a statement of a chain outside any transaction: at once when none is open (reads stay
   * as cheap as better-sqlite3's synchronous calls), else queued behind the open one.
   */
  private outside<T>(run: () => T): Promise<T> {
    try {
      this.scope.assertOutside('a statement on db.sql');
      if (!this.transactionOpen) return Promise.resolve(run());
    } catch (err) {
      return Promise.reject(err);
    }
    return this.inTurn(async () => run());
  }

  /** Runs `work` after every transaction queued before it. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lastTransaction.then(work);
    this.lastTransaction = run.catch(() => {});
    return run;
  }

  /** One process: a task of a name is already kept from running twice by its caller. */
  async exclusive(_name: string, task: () => Promise<void>): Promise<boolean> {
    await task();
    return true;
  }

  /**
   * The file is this box's alone: a second service process on the same DATA_DIR would release
   * the first one's leases. An owner file names the live process that holds it.
   */
  async holdName(name: string): Promise<void> {
    assertNotHeld(this.file);
    const ownerFile = `${this.file}.owner`;
    fs.writeFileSync(ownerFile, JSON.stringify({ pid: process.pid, host: os.hostname(), name }));
    this.ownerFile = ownerFile;
  }

  async notify(payload: string): Promise<void> {
    // Listeners run after the write's caller has its answer, as a remote notification would; a
    // notification sent from a transaction body waits for its commit.
    this.scope.afterCommit(() => queueMicrotask(() => this.events.emit('event', { type: 'notification', payload } satisfies DatabaseEvent)));
  }

  subscribe(listener: (event: DatabaseEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  /**
   * Gives freed pages back in steps of VACUUM_STEP_PAGES, each a transaction of its own in the
   * queue of transactions, so requests run between them; then checkpoints the WAL.
   */
  async reclaimSpace(): Promise<void> {
    for (;;) {
      const free = await this.transaction(async () => {
        this.db.pragma(`incremental_vacuum(${VACUUM_STEP_PAGES})`);
        return this.db.pragma('freelist_count', { simple: true }) as number;
      });
      if (free === 0) break;
      await new Promise((r) => setImmediate(r));
    }
    await this.inTurn(async () => void this.db.pragma('wal_checkpoint(TRUNCATE)'));
  }

  async sizeBytes(): Promise<number> {
    let bytes = 0;
    for (const f of [this.file, `${this.file}-wal`]) bytes += fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;
    return bytes;
  }

  async ping(): Promise<void> {
    await this.sql.get('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.ownerFile && readOwner(this.ownerFile)?.pid === process.pid) fs.rmSync(this.ownerFile, { force: true });
    this.ownerFile = null;
    if (this.db.open) this.db.close();
  }
}

/** Throws NameTakenError when another live process on this host holds the database `file`. */
export function assertNotHeld(file: string): void {
  const holder = readOwner(`${file}.owner`);
  if (holder && holder.pid !== process.pid && holder.host === os.hostname() && isAlive(holder.pid)) {
    throw new NameTakenError(
      `the database ${file} is in use by another running service (pid ${holder.pid}, node "${holder.name}"): stop it, or give this one a DATA_DIR of its own`,
    );
  }
}

function readOwner(file: string): { pid: number; host: string; name: string } | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
