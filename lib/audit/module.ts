// The audit module: the trail of changes and sign-ins (schema.ts, audit-store.ts), GET /audit and
// the middleware that records what requests changed (http/routes.ts), and the trail's retention.
import type { Database } from '../db/database.js';
import type { ModuleRoutes, ServiceModule } from '../service-module.js';
import { auditRetentionDuty, AuditStore } from './audit-store.js';
import { auditRoutes } from './http/routes.js';
import { auditSchema } from './schema.js';

export const auditModule = {
  schema: auditSchema,
  openStore: (db: Database) => new AuditStore(db),
  routes: (store: AuditStore): ModuleRoutes => (router) => auditRoutes(router, store),
  duties: (store: AuditStore, retentionMs: number, now: () => number) => [auditRetentionDuty(store, retentionMs, now)],
} satisfies ServiceModule;
