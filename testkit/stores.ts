// Every module's store on a database, opened as the service opens them (lib/service.ts), for tests
// and benchmarks that work with the stores without a running service.
import type { Database } from '../lib/db/database.js';
import { openStores, type Stores } from '../lib/service.js';

/** The stores and their database, which close() closes. */
export interface TestStores extends Stores {
  db: Database;
  close(): Promise<void>;
}

/** Migrates `db` as the service does and opens every module's store on it. */
export async function storesOn(db: Database): Promise<TestStores> {
  try {
    return { ...(await openStores(db)), db, close: () => db.close() };
  } catch (err) {
    await db.close();
    throw err;
  }
}
