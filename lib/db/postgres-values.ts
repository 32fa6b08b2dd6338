// How values and statements cross between the service and PostgreSQL: `?` placeholders numbered,
// a pool client's statements as a Tx, and BIGINT read back as a JavaScript number, as SQLite gives it.
import pg from 'pg';
import type { Tx } from './database.js';

/** PostgreSQL's type id of BIGINT (INT8), which `pg` returns as text unless told otherwise. */
const INT8_OID = 20;

/**
 * BIGINT columns (times in ms, counters, serial keys) arrive as numbers, as SQLite gives them. A
 * value beyond 2^53 could not be read back exactly: its query fails rather than return a wrong one.
 */
export function readTypes(oid: number, format?: string): (text: string) => unknown {
  if (oid === INT8_OID && format !== 'binary') return readInt8;
  return pg.types.getTypeParser(oid, format as 'text');
}

function readInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`a BIGINT from the database is beyond 2^53 and cannot be read exactly: ${text}`);
  return n;
}

/** `?` placeholders become PostgreSQL's `$n` (no statement here has a `?` inside a string). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export function clientTx(client: pg.PoolClient): Tx {
  return {
    all: async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows as T[],
    get: async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows[0] as T | undefined,
    run: async (sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rowCount ?? 0,
    exec: async (sql: string) => void (await client.query(sql)),
  };
}
