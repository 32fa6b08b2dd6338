// Each module owns its tables and their migrations, with a version of its own in
// `schema_modules`: jobs, cameras and webhooks change without renumbering one another. All run at
// start, in one transaction under the database's migration lock, so nodes that start together
// migrate once.
//
// The releases before kept one version for the whole schema (SQLite's user_version 1-4,
// PostgreSQL's schema_version table 1-3, whose jobs table already had the columns SQLite's second
// version added). A database of theirs is read as a "legacy level": SQLite's version, or
// PostgreSQL's plus one, and each module says which of its versions that level means.
import type { Tx } from './database.js';
import type { Dialect } from './dialect.js';
import { SchemaTooNewError } from './errors.js';

/** One version of a module's tables: runs inside the migration transaction. */
export type MigrationStep = (tx: Tx, d: Dialect) => Promise<void>;

export interface SchemaModule {
  /** Its row in schema_modules, e.g. `jobs`. */
  name: string;
  /** Version n is reached by steps[n - 1]; never change a released step, add one. */
  steps: MigrationStep[];
  /** The module's version in a database of the single-version releases, from its legacy level (1-4). */
  fromLegacy?(level: number): number;
}

/** A step of plain statements written with the dialect's fragments. */
export const ddl =
  (make: (d: Dialect) => string): MigrationStep =>
  (tx, d) =>
    tx.exec(make(d));

/**
 * Brings every module to its newest version. `legacyLevel` is the single-version schema the
 * database had before it had schema_modules (0: none, a new database).
 */
export async function applyMigrations(tx: Tx, d: Dialect, modules: SchemaModule[], legacyLevel: number): Promise<void> {
  await tx.exec('CREATE TABLE IF NOT EXISTS schema_modules (module TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  const rows = await tx.all<{ module: string; version: number }>('SELECT module, version FROM schema_modules');
  const versions = new Map(rows.map((r) => [r.module, r.version]));
  const imported = rows.length === 0 && legacyLevel > 0;
  for (const m of modules) {
    let version = versions.get(m.name) ?? (imported ? (m.fromLegacy?.(legacyLevel) ?? 0) : 0);
    if (version > m.steps.length) {
      throw new SchemaTooNewError(`the database's ${m.name} tables are at version ${version}, newer than this release knows (${m.steps.length}): run the newer release`);
    }
    const known = versions.has(m.name);
    for (; version < m.steps.length; version++) await m.steps[version](tx, d);
    if (known) await tx.run('UPDATE schema_modules SET version = ? WHERE module = ?', version, m.name);
    else await tx.run('INSERT INTO schema_modules (module, version) VALUES (?, ?)', m.name, version);
  }
}

/** The version of each module (tests, diagnostics). */
export async function moduleVersions(tx: Tx): Promise<Record<string, number>> {
  const rows = await tx.all<{ module: string; version: number }>('SELECT module, version FROM schema_modules ORDER BY module');
  return Object.fromEntries(rows.map((r) => [r.module, r.version]));
}
