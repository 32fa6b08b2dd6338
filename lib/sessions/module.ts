// The sessions module: the console's signed-in browsers (schema.ts, session-store.ts), opened with
// a user's name and password (sessions.ts, checked by lib/users/ through the functions it is
// given), the /session routes and the cookie's authentication of API requests (http/routes.ts),
// and the deletion of expired sessions.
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { ModuleRoutes, ServiceModule } from '../service-module.js';
import { sessionRoutes } from './http/routes.js';
import { sessionsSchema } from './schema.js';
import { SessionStore } from './session-store.js';
import { expiredSessionsDuty, type Sessions } from './sessions.js';

export const sessionsModule = {
  schema: sessionsSchema,
  openStore: (db: Database) => new SessionStore(db),
  routes: (sessions: Sessions, logger: Logger, address: (ctx: Context) => string): ModuleRoutes => (router) => sessionRoutes(router, sessions, logger, address),
  duties: (store: SessionStore, now: () => number) => [expiredSessionsDuty(store, now)],
} satisfies ServiceModule;
