// GET /metrics: Prometheus text format, behind the same Basic auth as everything.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ServiceDeps } from '../app.js';

export function metricsRoutes(router: Router, deps: ServiceDeps): void {
  router.get('/metrics', async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = deps.metrics.contentType;
    ctx.body = await deps.metrics.text();
  });
}
