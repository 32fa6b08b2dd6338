// The few places where SQLite and PostgreSQL differ, as fragments a statement is written with.
// Everything else (`?` placeholders, INSERT ... ON CONFLICT, RETURNING, partial indexes) both
// speak alike.

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** Column type of an autoincrementing primary key. */
  readonly serial: string;
  /** Column type of a 64-bit integer (times in ms, counters). */
  readonly bigint: string;
  /** Milliseconds since the epoch on the database's clock: nodes' clocks need not agree. */
  readonly nowMs: string;
  /**
   * Appended to a SELECT whose rows an UPDATE takes next: concurrent takers skip the rows another
   * holds instead of waiting for it. Empty on SQLite, where one transaction writes at a time.
   */
  readonly skipLocked: string;
  /**
   * A condition that is always true and lets the statement's commit skip the wait for the disk
   * (PostgreSQL's synchronous_commit off for its transaction): for writes a crash may lose,
   * such as progress text. SQLite (synchronous NORMAL in WAL mode) waits for no disk anyway.
   */
  readonly lazyCommit: string;
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  bigint: 'INTEGER',
  nowMs: `CAST(unixepoch('subsec') * 1000 AS INTEGER)`,
  skipLocked: '',
  lazyCommit: '1 = 1',
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  serial: 'BIGSERIAL PRIMARY KEY',
  bigint: 'BIGINT',
  nowMs: `(extract(epoch from clock_timestamp()) * 1000)::bigint`,
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  lazyCommit: `set_config('synchronous_commit', 'off', true) IS NOT NULL`,
};
