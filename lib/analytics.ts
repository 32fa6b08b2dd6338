// The analytics of the service, one line each: its descriptor (the job machinery's view, lib/jobs/
// analytic.ts). The queue reads time limits and disk needs from here, worker processes (lib/
// worker.ts) load the analytics' code from here. Their HTTP routes are listed apart, in
// lib/served-analytics.ts, so that a worker process loads no HTTP code.
import { AnalyticRegistry } from './jobs/analytic.js';
import { kamcheckAnalytic } from './kamcheck/analytic.js';
import { kamcheckReferenceAnalytic } from './kamcheck/get-reference/analytic.js';
import { faceDetectAnalytic, faceDetectImageAnalytic, faceLogAnalytic, faceLogImageAnalytic } from './facelog/analytic.js';

export const analytics = new AnalyticRegistry([
  kamcheckAnalytic,
  kamcheckReferenceAnalytic,
  faceLogAnalytic,
  faceLogImageAnalytic,
  faceDetectAnalytic,
  faceDetectImageAnalytic,
]);
