// The Koa application: one error handler that speaks the SPEC's envelope, the operator console's
// files, authentication on every route (Basic, or a console session), then the analytics' routes.
import Koa, { type Context, type Middleware, type Next } from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { Config, Credential } from '../config.js';
import type { JobQueue } from '../jobs/queue.js';
import type { JobStore } from '../jobs/store.js';
import { basicAuth } from './auth.js';
import { errorBody, methodNotAllowed, notFound } from './errors.js';
import { describeError } from '../errors.js';
import { resultRoutes } from './routes/results.js';
import { parseLinkToken, RESULTS_PATH, type ResultLinks } from './result-links.js';
import { multipartUpload } from './upload.js';
import type { WorkerPool } from '../jobs/worker-pool.js';
import type { StorageGuard } from '../disk-space.js';
import type { ServiceMetrics } from '../metrics.js';
import type { ServedAnalytic } from './served-analytics.js';
import { allowedMethods, requestMetrics } from './request-metrics.js';
import { SERVER_HEADER } from '../version.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { openApiRoutes } from './routes/openapi.js';
import { CAMERAS_PATH, cameraRoutes, captureLinkSubject, referenceLinkSubject } from '../cameras/routes.js';
import type { CheckSchedule } from '../cameras/check-schedule.js';
import { consolePages } from '../console/pages.js';
import { Sessions } from '../sessions/sessions.js';
import { SESSION_PATH, sessionAuth, sessionRoutes } from '../sessions/routes.js';

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
  pool: WorkerPool;
  /** Free space of DATA_DIR against MIN_FREE_DISK_MB. */
  storage: StorageGuard;
  metrics: ServiceMetrics;
  /** This node's name (NODE_ID). */
  nodeId: string;
  /** The analytics whose routes the app serves (lib/http/served-analytics.ts). */
  analytics: ServedAnalytic[];
  /** Queues the checks of camera streams (lib/cameras/check-schedule.ts). */
  checks: CheckSchedule;
}

export function createApp(deps: Omit<ServiceDeps, 'upload'> & { credentials: Credential[]; tmpDir: string }): Koa {
  const app = new Koa();
  app.proxy = false;
  // A full queue refuses an upload before its body is read.
  const upload = multipartUpload(deps.tmpDir, deps.config.maxUploadBytes, deps.storage, () => deps.queue.assertCapacity());
  const full: ServiceDeps = { ...deps, upload };
  const router = new Router();

  app.use(serverHeader);
  app.use(requestMetrics(deps.metrics, router, deps.logger));
  app.use(errorEnvelope(deps.logger));
  // The console's page and bundle hold no data: they come before authentication.
  app.use(consolePages(deps.config.publicBaseUrl));
  const signedLink = (ctx: Context) => signedResultLink(ctx, deps.links) || signedReferenceLink(ctx, deps.links);
  // A console session's cookie stands in for the Basic header; /session itself needs neither.
  const sessions = new Sessions(deps.store?.db, deps.credentials); // no store: test/61 reads the routes of an app never started
  app.use(sessionAuth(sessions, signedLink));
  app.use(basicAuth({ credentials: deps.credentials, bypass: (ctx) => signedLink(ctx) || ctx.state.session !== undefined || ctx.path === SESSION_PATH }));

  for (const served of deps.analytics) served.routes(router, full);
  sessionRoutes(router, sessions, deps.logger);
  cameraRoutes(router, full);
  resultRoutes(router, full);
  healthRoutes(router, full);
  metricsRoutes(router, full);
  openApiRoutes(router);
  app.use(router.routes());
  app.use((ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allowed = allowedMethods(router, ctx.path);
    if (allowed.length > 0) throw methodNotAllowed(ctx.method, allowed);
    throw notFound(`no endpoint ${ctx.method} ${ctx.path}`);
  });
  // Koa's own logging of errors is replaced by errorEnvelope.
  app.silent = true;
  return app;
}

/** Every response names the service and its version (SPEC), errors and 404s included. */
async function serverHeader(ctx: Context, next: Next): Promise<void> {
  ctx.set('Server', SERVER_HEADER);
  await next();
}

/**
 * Turns every error into the SPEC's error envelope, reading what the error says of itself
 * (lib/errors.ts): its status, code and headers; its message only when it is exposed. Anything
 * else is a defect: logged with its stack, answered 500 with a generic text.
 */
function errorEnvelope(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (raw) {
      if (largeUnreadBody(ctx)) ctx.set('Connection', 'close');
      const err = describeError(raw);
      if (!err.expose) logger.error({ err: raw, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = err.expose ? err.status : 500;
      ctx.set(err.headers);
      ctx.body = err.expose ? errorBody(err.code, err.message) : errorBody('internal_error', 'internal server error');
    }
  };
}

/**
 * Below this, the unread rest of a refused request's body is read and dropped by Node so the
 * connection stays open (closing with unread data makes the kernel reset it, and the client may
 * lose the answer); above it, or of unknown length, the connection is closed instead.
 */
const DRAIN_LIMIT_BYTES = 1024 * 1024;

/** A refused request whose body was not (fully) read and is too large to drain, e.g. a 401 or 413 on an upload. */
function largeUnreadBody(ctx: Context): boolean {
  if (ctx.req.complete) return false;
  const declared = Number(ctx.get('content-length'));
  return !ctx.get('content-length') || !Number.isFinite(declared) || declared > DRAIN_LIMIT_BYTES;
}

/**
 * A GET of a result file whose link carries a valid signature needs no Basic header: in the path
 * (`/results/<job_id>/<expires>.<sig>/<file>`) or, in links of the earlier form, in the query.
 */
function signedResultLink(ctx: Context, links: ResultLinks): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  // Expiry is the retention period's end: the route answers 410 after it, signature or not.
  const inPath = new RegExp(`^${RESULTS_PATH}/([^/]+)/([^/]+)/[^/]+$`).exec(ctx.path);
  if (inPath) {
    const token = parseLinkToken(inPath[2]);
    return token !== null && links.verify(inPath[1], token.expires, token.sig);
  }
  const m = new RegExp(`^${RESULTS_PATH}/([^/]+)/[^/]+$`).exec(ctx.path);
  if (!m) return false;
  const { expires, sig } = ctx.query;
  return links.verify(m[1], typeof expires === 'string' ? expires : undefined, typeof sig === 'string' ? sig : undefined);
}

/** Likewise a GET of a camera's picture (a reference, its last capture) with a valid, unexpired signature. */
function signedReferenceLink(ctx: Context, links: ResultLinks): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const m = new RegExp(`^${CAMERAS_PATH}/[^/]+/(references|captures)/([0-9a-f-]{36})$`).exec(ctx.path);
  if (!m) return false;
  const { expires, sig } = ctx.query;
  if (typeof expires !== 'string' || Number(expires) * 1000 < Date.now()) return false;
  const subject = m[1] === 'references' ? referenceLinkSubject(m[2]) : captureLinkSubject(m[2]);
  return links.verify(subject, expires, typeof sig === 'string' ? sig : undefined);
}
