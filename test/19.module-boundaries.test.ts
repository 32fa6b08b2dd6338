// The modules' boundaries, read from the TypeScript sources (type-only imports count: naming
// another layer's type is depending on it):
// - a module's domain code never reaches the HTTP layer: no file of lib/ outside an `http/` folder
//   (lib/http/ or a module's own), the modules' doors (module.ts) and the composition root reaches
//   lib/http/, a module's http/ folder or Koa, through any chain of imports;
// - a module's tables are named in SQL only in its own folder: the other modules reach them
//   through its store. Which module owns which table is read from the modules' own migrations.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { SqliteDatabase } from '../lib/db/sqlite-database.js';
import { MODULES } from '../lib/service.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import { chain, importGraph } from './helpers/import-graph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIB = path.join(ROOT, 'lib');
/** Where a module's parts meet: they may import both faces of it. */
const DOORS = new Set(['lib/service.ts', 'lib/main.ts', 'lib/service-module.ts', 'lib/served-analytics.ts']);
const HTTP_PACKAGES = ['koa', '@koa/router', 'koa-body', 'formidable'];
/** SQL naming a table: the house writes SQL keywords in capitals. */
const TABLE_NAMED = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE(?: IF NOT EXISTS| IF EXISTS)?|ON)\s+([a-z_][a-z0-9_]*)\b/g;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

/** A file's path from the project's root (`root`), with forward slashes. */
const relative = (root: string, file: string) => path.relative(root, file).split(path.sep).join('/');
const isHttp = (root: string, file: string) => /^lib\/(?:[^/]+\/)*http\//.test(relative(root, file));
const isDoor = (root: string, file: string) => DOORS.has(relative(root, file)) || /^lib\/[^/]+\/module\.ts$/.test(relative(root, file));
/** The module a file of lib/ belongs to: its folder under lib/ (null for a file at the top). */
const moduleOf = (root: string, file: string) => /^lib\/([^/]+)\//.exec(relative(root, file))?.[1] ?? null;

/** Domain files of `root`/lib that reach the HTTP layer, each with the chain of imports that does. */
function httpReaches(root: string, files: string[]): string[] {
  const found: string[] = [];
  for (const file of files.filter((f) => !isHttp(root, f) && !isDoor(root, f))) {
    const graph = importGraph([file], true);
    const http = [...graph.files.keys()].find((f) => isHttp(root, f));
    if (http) found.push(chain(graph, http, root));
    for (const p of HTTP_PACKAGES) if (graph.packages.has(p)) found.push(`${chain(graph, graph.packages.get(p)!, root)} -> ${p}`);
  }
  return found;
}

/** The tables each module's migrations create, applied in the service's order on a new database. */
async function tableOwners(): Promise<Map<string, string>> {
  const dir = tempDataDir();
  const db = new SqliteDatabase(path.join(dir, 'tables.sqlite'));
  const owners = new Map<string, string>();
  try {
    for (const m of MODULES) {
      await db.migrate([m.schema]);
      for (const { name } of await db.sql.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)) {
        if (!owners.has(name) && name !== 'schema_modules') owners.set(name, m.schema.name);
      }
    }
  } finally {
    await db.close();
    removeTempDir(dir);
  }
  return owners;
}

/** `file: table (module)` for each table of another module named in SQL of `code`. */
function foreignTables(root: string, file: string, code: string, owners: Map<string, string>): string[] {
  const mine = moduleOf(root, file);
  const found = new Set<string>();
  for (const [, table] of code.matchAll(TABLE_NAMED)) {
    const owner = owners.get(table);
    if (owner && owner !== mine) found.add(`${relative(root, file)}: ${table} (${owner})`);
  }
  return [...found];
}

describe("the modules' boundaries", () => {
  const files = sources(LIB);
  let owners: Map<string, string>;
  before(async () => {
    owners = await tableOwners();
  });

  it('reads which module owns which table from their migrations', () => {
    expect(Object.fromEntries(owners)).to.include({ jobs: 'jobs', camera_sources: 'sources', cameras: 'cameras', webhook_outbox: 'webhooks', sessions: 'sessions' });
    // Every module has tables of its own.
    expect(new Set(owners.values())).to.deep.equal(new Set(MODULES.map((m) => m.schema.name)));
  });

  it('no domain code reaches the HTTP layer or Koa, through any chain of imports', () => {
    expect(httpReaches(ROOT, files)).to.deep.equal([]);
  });

  it("no module names another module's tables in SQL", () => {
    expect(files.flatMap((f) => foreignTables(ROOT, f, fs.readFileSync(f, 'utf8'), owners))).to.deep.equal([]);
  });

  it('each check finds what it looks for: a stand-in project whose module reaches both', () => {
    const root = tempDataDir();
    try {
      const file = (name: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
        fs.writeFileSync(path.join(root, name), text);
        return path.join(root, name);
      };
      file('lib/http/errors.ts', `export const notFound = () => new Error('no');\n`);
      file('lib/probe/helper.ts', `import type { Context } from 'koa';\nimport { notFound } from '../http/errors.js';\nexport const x = notFound;\n`);
      const domain = file('lib/probe/domain.ts', `import { x } from './helper.js';\nexport const sql = 'SELECT * FROM jobs j JOIN webhook_outbox o ON o.seq = 1';\n`);
      const door = file('lib/probe/module.ts', `import { notFound } from '../http/errors.js';\n`);
      const reaches = httpReaches(root, [domain, door]);
      expect(reaches).to.deep.equal(['lib/probe/domain.ts -> lib/probe/helper.ts -> lib/http/errors.ts', 'lib/probe/domain.ts -> lib/probe/helper.ts -> koa']);
      expect(foreignTables(root, domain, fs.readFileSync(domain, 'utf8'), owners)).to.deep.equal(['lib/probe/domain.ts: jobs (jobs)', 'lib/probe/domain.ts: webhook_outbox (webhooks)']);
      // The same SQL in the module that owns the tables is its own business.
      expect(foreignTables(root, path.join(root, 'lib/jobs/store.ts'), 'SELECT * FROM jobs', owners)).to.deep.equal([]);
    } finally {
      removeTempDir(root);
    }
  });
});
