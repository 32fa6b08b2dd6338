// The Koa application: one error handler that speaks the SPEC's envelope, authentication on
// every route, then the analytics' routes.
import Koa, { type Context, type Middleware, type Next } from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { Config, Credential } from '../config.js';
import type { JobQueue } from '../jobs/queue.js';
import { QueueFullError } from '../jobs/queue.js';
import type { JobStore } from '../jobs/store.js';
import { basicAuth } from './auth.js';
import { ApiError, busy, notFound } from './errors.js';
import { kamcheckRoutes } from './routes/kamcheck.js';
import { faceLogRoutes } from './routes/face-log.js';
import { resultRoutes } from './routes/results.js';
import { RESULTS_PATH, type ResultLinks } from './result-links.js';
import { multipartUpload } from './upload.js';

export interface ServiceDeps {
  config: Config;
  store: JobStore;
  queue: JobQueue;
  logger: Logger;
  /** Where accepted jobs keep their files: `<jobsDir>/<job_id>/`. */
  jobsDir: string;
  /** Multipart parser middleware for upload routes. */
  upload: Middleware;
  /** Where finished jobs keep their result files: `<resultsDir>/<job_id>/`. */
  resultsDir: string;
  /** Retention of result files and links. */
  resultTtlMs: number;
  links: ResultLinks;
  /** The clock (tests move it to expire results). */
  now: () => number;
}

export function createApp(deps: Omit<ServiceDeps, 'upload'> & { credentials: Credential[]; tmpDir: string }): Koa {
  const app = new Koa();
  app.proxy = false;
  const full: ServiceDeps = { ...deps, upload: multipartUpload(deps.tmpDir, deps.config.maxUploadBytes) };

  app.use(errorEnvelope(deps.logger));
  app.use(basicAuth({ credentials: deps.credentials, bypass: (ctx) => signedResultLink(ctx, deps.links) }));

  const router = new Router();
  kamcheckRoutes(router, full);
  faceLogRoutes(router, full);
  resultRoutes(router, full);
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  app.use((ctx) => {
    if (ctx.status === 404 && ctx.body === undefined) throw notFound(`no endpoint ${ctx.method} ${ctx.path}`);
  });
  // Koa's own logging of errors is replaced by errorEnvelope.
  app.silent = true;
  return app;
}

/** Turns every error into `{ status: "error", error: { code, message } }`; only ApiErrors show their text. */
function errorEnvelope(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (raw) {
      let err = raw as Error;
      if (err instanceof QueueFullError) err = busy(err.retryAfterSeconds);
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = { status: 'error', error: { code: err.code, message: err.message } };
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = 500;
      ctx.body = { status: 'error', error: { code: 'internal_error', message: 'internal server error' } };
    }
  };
}

/** A GET of a result file whose link carries a valid signature needs no Basic header. */
function signedResultLink(ctx: Context, links: ResultLinks): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const m = new RegExp(`^${RESULTS_PATH}/([^/]+)/[^/]+$`).exec(ctx.path);
  if (!m) return false;
  const { expires, sig } = ctx.query;
  // Expiry is the retention period's end: the route answers 410 after it, signature or not.
  return links.verify(m[1], typeof expires === 'string' ? expires : undefined, typeof sig === 'string' ? sig : undefined);
}
