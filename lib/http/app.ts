// The Koa application: one error handler that speaks the SPEC's envelope, the operator console's
// files, authentication on every route (Basic, a key, or a console session), the audit trail,
// then the routes the composition root (lib/service.ts) gives it, each behind its access rule
// (access.ts): each module's, the analytics', health and metrics.
import Koa, { type Context, type Middleware, type Next } from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { StorageGuard } from '../disk-space.js';
import { describeError } from '../errors.js';
import type { ServiceMetrics } from '../metrics.js';
import type { HttpParts, ModuleRoutes } from '../service-module.js';
import { SERVER_HEADER } from '../version.js';
import { installAccessRules } from './access.js';
import { consolePages } from './console-pages.js';
import { errorBody, methodNotAllowed, notFound } from './errors.js';
import { allowedMethods, requestMetrics } from './request-metrics.js';
import { multipartUpload } from './upload.js';

export interface AppParts {
  config: Pick<Config, 'maxUploadBytes' | 'publicBaseUrl'>;
  logger: Logger;
  /** Who the request is, from its Authorization header (auth.ts); skipped by `open` requests. */
  authenticate: (bypass: (ctx: Context) => boolean) => Middleware;
  /** Records what a request changed (lib/audit/), once it has been answered. */
  auditTrail: Middleware;
  /** Where uploads are written while they arrive. */
  tmpDir: string;
  /** Free space of DATA_DIR against MIN_FREE_DISK_MB: uploads that would go below it are refused. */
  storage: StorageGuard;
  metrics: ServiceMetrics;
  /** Refuses an upload before its body is read (a full queue). */
  admit(): Promise<void>;
  /** A request whose link carries a valid signature (a result file, a picture): it needs no credentials. */
  signedLink(ctx: Context): boolean;
  /** Authenticates a request by its console session before Basic is asked for; sets ctx.state.session. */
  sessionAuth: Middleware;
  /** Paths a request without credentials may reach (the console's sign-in). */
  openPaths: string[];
  /** Every route of the service: each module's, the analytics', health, metrics, the API document. */
  routes: ModuleRoutes[];
}

export function createApp(parts: AppParts): { app: Koa; router: Router } {
  const app = new Koa();
  app.proxy = false;
  // A full queue refuses an upload before its body is read.
  const http: HttpParts = { upload: multipartUpload(parts.tmpDir, parts.config.maxUploadBytes, parts.storage, parts.admit) };
  const router = new Router();

  app.use(serverHeader);
  app.use(requestMetrics(parts.metrics, router, parts.logger));
  app.use(errorEnvelope(parts.logger));
  // The console's page and bundle hold no data: they come before authentication.
  app.use(consolePages(parts.config.publicBaseUrl));
  // A console session's cookie stands in for the Basic header; the sign-in itself needs neither.
  app.use(parts.sessionAuth);
  const open = (ctx: Context) => {
    if (parts.signedLink(ctx)) ctx.state.signedLink = true;
    return ctx.state.signedLink === true || ctx.state.session !== undefined || parts.openPaths.includes(ctx.path);
  };
  app.use(parts.authenticate(open));
  app.use(parts.auditTrail);

  for (const routes of parts.routes) routes(router, http);
  // Every route has its rule of who may use it, or the service does not start.
  installAccessRules(router);
  app.use(router.routes());
  app.use((ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allowed = allowedMethods(router, ctx.path);
    if (allowed.length > 0) throw methodNotAllowed(ctx.method, allowed);
    throw notFound(`no endpoint ${ctx.method} ${ctx.path}`);
  });
  // Koa's own logging of errors is replaced by errorEnvelope.
  app.silent = true;
  return { app, router };
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
