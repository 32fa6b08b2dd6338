// Which database a node uses: PostgreSQL when DATABASE_URL is set (several nodes as one
// service), a SQLite file under DATA_DIR otherwise (one box).
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from './database.js';
import { PostgresDatabase } from './postgres-database.js';
import { SqliteDatabase } from './sqlite-database.js';

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>, logger: Logger): Promise<Database> {
  if (config.databaseUrl) return PostgresDatabase.open({ url: config.databaseUrl, logger });
  return new SqliteDatabase(path.join(config.dataDir, 'jobs.sqlite'));
}
