// Every request's duration, by method, route pattern and status, into the metrics; and a debug
// log line per request (never its headers: they carry credentials).
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { ServiceMetrics } from '../metrics.js';

/** Route label of requests no route matches: one label, so scanners cannot grow the series. */
export const UNMATCHED_ROUTE = 'unmatched';

export function requestMetrics(metrics: ServiceMetrics, router: Router, logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    // Measured until the response is sent (or the connection drops), streamed bodies included.
    ctx.res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(router, ctx.path, ctx.method);
      metrics.observeHttp(ctx.method, route, ctx.status, seconds);
      logger.debug({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000) }, 'request');
    });
    await next();
  };
}

/** The pattern of the route that serves `path` (e.g. `/kamcheck/:jobId`), whatever answered. */
export function routeLabel(router: Router, path: string, method: string): string {
  const layer = router.match(path, method).pathAndMethod.find((l) => l.methods.length > 0);
  return layer ? String(layer.path) : UNMATCHED_ROUTE;
}

/** Methods some route serves at `path` (empty when no route has that path). */
export function allowedMethods(router: Router, path: string): string[] {
  const methods = new Set<string>();
  for (const layer of router.match(path, 'GET').path) for (const m of layer.methods) methods.add(m);
  return [...methods];
}
