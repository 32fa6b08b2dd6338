// The jobs module: the jobs themselves, their totals and idempotency keys (schema.ts), every
// statement on them (store.ts), the downloads of result files (http/results-routes.ts; the
// analytics' own routes accept and show jobs through http/), and its retention (retention.ts).
// It calls no other module: the modules that act on a job's outcome or on deleted records
// register hooks with its store (onFinish, onPurge).
import type { Database } from '../db/database.js';
import type { ModuleRoutes, ServiceModule } from '../service-module.js';
import { resultRoutes } from './http/results-routes.js';
import type { JobHttp } from './http/job-http.js';
import { retentionDuty, type RetentionOptions } from './retention.js';
import { jobsSchema } from './schema.js';
import { JobStore } from './store.js';

export const jobsModule = {
  schema: jobsSchema,
  openStore: (db: Database) => new JobStore(db),
  routes: (deps: Pick<JobHttp, 'jobs' | 'now' | 'resultsDir' | 'resultTtlMs'>): ModuleRoutes => (router) => resultRoutes(router, deps),
  duties: (o: RetentionOptions) => [retentionDuty(o)],
} satisfies ServiceModule;
