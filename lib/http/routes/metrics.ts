// GET /metrics: Prometheus text format, behind the same Basic auth as everything.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ServiceMetrics } from '../../metrics.js';

export function metricsRoutes(router: Router, metrics: ServiceMetrics): void {
  router.get('/metrics', async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  });
}
