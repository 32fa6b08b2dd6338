// Which database a node uses: PostgreSQL when DATABASE_URL is set (several nodes as one
// service), a SQLite file under DATA_DIR otherwise (one box).
//
// The file is `appliance.sqlite`. Releases before this one called it `jobs.sqlite`, though every
// module's tables live in it: a box upgraded from one finds its file renamed at the first start,
// committed transactions still in its write-ahead log included (they are checkpointed into the
// file first, so that the one rename that moves it carries everything).
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from './database.js';
import { PostgresDatabase } from './postgres-database.js';
import { SqliteDatabase, assertNotHeld } from './sqlite-database.js';

export const DATABASE_FILE = 'appliance.sqlite';
/** The name of the same file in the releases before this one. */
export const EARLIER_DATABASE_FILE = 'jobs.sqlite';

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>, logger: Logger): Promise<Database> {
  if (config.databaseUrl) return PostgresDatabase.open({ url: config.databaseUrl, logger });
  const file = path.join(config.dataDir, DATABASE_FILE);
  adoptEarlierFile(config.dataDir, logger);
  return new SqliteDatabase(file);
}

/**
 * Renames an earlier release's `jobs.sqlite` to DATABASE_FILE when there is no DATABASE_FILE yet.
 * A crash at any point leaves either the old file whole (renamed at the next start) or the new
 * one: the write-ahead log is merged into the file before the rename, which is atomic.
 */
export function adoptEarlierFile(dataDir: string, logger: Logger): void {
  const earlier = path.join(dataDir, EARLIER_DATABASE_FILE);
  const file = path.join(dataDir, DATABASE_FILE);
  if (!fs.existsSync(earlier)) return;
  if (fs.existsSync(file)) {
    logger.warn({ file: earlier }, `both ${DATABASE_FILE} and an earlier release's ${EARLIER_DATABASE_FILE} are in DATA_DIR: ${DATABASE_FILE} is used, the other is left as it is`);
    return;
  }
  // A process of the earlier release still running on it would go on writing the old name.
  assertNotHeld(earlier);
  const db = new BetterSqlite(earlier);
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('wal_checkpoint(TRUNCATE)');
    // A file in rollback-journal mode after this keeps no log beside it: nothing can be left behind.
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
  fs.renameSync(earlier, file);
  for (const suffix of ['-wal', '-shm', '.owner']) fs.rmSync(`${earlier}${suffix}`, { force: true });
  logger.info({ from: earlier, to: file }, 'renamed the database file of an earlier release');
}
