// The analytics of the service, one line each: its descriptor (the job machinery's view, lib/jobs/
// analytic.ts) and its HTTP routes. The HTTP layer installs the routes, the queue reads time limits
// and disk needs, worker processes (lib/worker.ts) load the analytics' code from here.
import type Router from '@koa/router';
import { AnalyticRegistry, type Analytic } from './jobs/analytic.js';
import type { ServiceDeps } from './http/app.js';
import { kamcheckAnalytic } from './kamcheck/analytic.js';
import { kamcheckRoutes } from './kamcheck/routes.js';
import { faceLogAnalytic } from './facelog/analytic.js';
import { faceLogRoutes } from './facelog/routes.js';

export interface ServedAnalytic {
  analytic: Analytic<any>;
  routes: (router: Router, deps: ServiceDeps) => void;
}

export const servedAnalytics: ServedAnalytic[] = [
  { analytic: kamcheckAnalytic, routes: kamcheckRoutes },
  { analytic: faceLogAnalytic, routes: faceLogRoutes },
];

export const analytics = new AnalyticRegistry(servedAnalytics.map((s) => s.analytic));
