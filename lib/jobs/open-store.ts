// Which job store a node uses: PostgreSQL when DATABASE_URL is set (several nodes as one
// service), SQLite under DATA_DIR otherwise (one box).
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { PgJobStore } from './pg-store.js';
import { SqliteJobStore } from './sqlite-store.js';
import type { JobStore } from './store.js';

export async function openJobStore(config: Config, logger: Logger): Promise<JobStore> {
  if (config.databaseUrl) return PgJobStore.open({ url: config.databaseUrl, logger });
  return new SqliteJobStore(path.join(config.dataDir, 'jobs.sqlite'));
}
