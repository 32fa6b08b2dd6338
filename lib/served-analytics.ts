// The routes of each analytic, one line each, which the composition root (lib/service.ts) gives
// the HTTP app. Apart from the descriptors in lib/analytics.ts because worker processes load those
// and must load no HTTP code (test/17); the two lists name the same analytics.
import type Router from '@koa/router';
import type { Analytic } from './jobs/analytic.js';
import type { JobRecord } from './jobs/job-record.js';
import type { JobHttp } from './jobs/http/job-http.js';
import type { Task } from './jobs/http/task-view.js';
import { kamcheckAnalytic } from './kamcheck/analytic.js';
import { kamcheckRoutes, type KamcheckHttp } from './kamcheck/http/routes.js';
import { kamcheckReferenceAnalytic } from './kamcheck/get-reference/analytic.js';
import { kamcheckReferenceRoutes, presentReferencePickTaskAt } from './kamcheck/http/get-reference-routes.js';
import { faceDetectAnalytic, faceDetectImageAnalytic, faceLogAnalytic, faceLogImageAnalytic } from './facelog/analytic.js';
import { faceDetectImageRoutes, faceDetectRoutes, faceLogImageRoutes, faceLogRoutes } from './facelog/http/routes.js';
import { presentFaceLogTaskAt } from './facelog/http/task-view.js';

/** What the analytics' routes use, all of them: the jobs' HTTP face, and the tamper check's set-up of a camera's check. */
export type AnalyticHttp = KamcheckHttp;

/** A job's task as GET shows it, its result links under `base`: for bodies sent outside a request (webhooks). */
export type TaskAt = (job: JobRecord, deps: Pick<JobHttp, 'links' | 'resultTtlMs'>, base: string) => Task;

export interface ServedAnalytic {
  analytic: Analytic<any>;
  routes: (router: Router, deps: AnalyticHttp) => void;
  /** For analytics whose tasks carry result links; others' tasks are their records as they are (presentTask). */
  presentAt?: TaskAt;
}

export const servedAnalytics: ServedAnalytic[] = [
  { analytic: kamcheckAnalytic, routes: kamcheckRoutes },
  { analytic: kamcheckReferenceAnalytic, routes: kamcheckReferenceRoutes, presentAt: presentReferencePickTaskAt },
  { analytic: faceLogAnalytic, routes: faceLogRoutes, presentAt: presentFaceLogTaskAt },
  { analytic: faceLogImageAnalytic, routes: faceLogImageRoutes, presentAt: presentFaceLogTaskAt },
  { analytic: faceDetectAnalytic, routes: faceDetectRoutes, presentAt: presentFaceLogTaskAt },
  { analytic: faceDetectImageAnalytic, routes: faceDetectImageRoutes, presentAt: presentFaceLogTaskAt },
];
