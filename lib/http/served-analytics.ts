// The routes of each analytic, one line each, for the HTTP layer (lib/http/app.ts). Apart from the
// descriptors in lib/analytics.ts because worker processes load those and must load no HTTP code
// (test/17); the two lists name the same analytics.
import type Router from '@koa/router';
import type { Analytic } from '../jobs/analytic.js';
import type { ServiceDeps } from './app.js';
import { kamcheckAnalytic } from '../kamcheck/analytic.js';
import { kamcheckRoutes } from '../kamcheck/routes.js';
import { faceLogAnalytic } from '../facelog/analytic.js';
import { faceLogRoutes } from '../facelog/routes.js';

export interface ServedAnalytic {
  analytic: Analytic<any>;
  routes: (router: Router, deps: ServiceDeps) => void;
}

export const servedAnalytics: ServedAnalytic[] = [
  { analytic: kamcheckAnalytic, routes: kamcheckRoutes },
  { analytic: faceLogAnalytic, routes: faceLogRoutes },
];
