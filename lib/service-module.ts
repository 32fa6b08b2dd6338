// What a module of the service is made of. Each module (jobs, sources, cameras, webhooks,
// sessions) exports one descriptor from its folder's module.ts: its tables and their migrations,
// its store (every statement on those tables: other modules reach them only through it), its
// routes (its HTTP face, in its http/ folder) and its periodic duties. The composition root
// (lib/service.ts) lists the modules, migrates their tables together and wires each one's parts
// with what it needs; docs/database.md lists them with their tables, duties and what each may call.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Database } from './db/database.js';
import type { SchemaModule } from './db/migrations.js';
import type { Duty } from './duty-runner.js';

/** What every module's routes may use of the HTTP layer, made when the app is. */
export interface HttpParts {
  /** Parses a multipart upload into ctx.state.upload (lib/http/upload.ts). */
  upload: Middleware;
}

/** A module's HTTP face, ready to register its routes. */
export type ModuleRoutes = (router: Router, http: HttpParts) => void;

export interface ServiceModule {
  /** Its tables and their migrations; `schema.name` is the module's name. */
  readonly schema: SchemaModule;
  /** Its store on the service's database, given the stores of the modules it calls. */
  readonly openStore: (db: Database, ...calls: never[]) => unknown;
  /** Its HTTP face, given what it needs. */
  readonly routes?: (...wiring: never[]) => ModuleRoutes;
  /** Its periodic work, given what it needs; lib/duty-runner.ts runs it. */
  readonly duties?: (...wiring: never[]) => Duty[];
}
