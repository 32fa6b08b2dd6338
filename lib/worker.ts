// Entry point of an analytics worker process (forked by the worker pool): it serves the
// service's analytics, and is the only kind of process that loads OpenCV.
import { analytics } from './analytics.js';
import { serveJobs } from './jobs/worker-process.js';

serveJobs(analytics);
