// The tamper check as the job machinery sees it (lib/jobs/analytic.ts): no OpenCV here; the
// worker's code is loaded only in worker processes.
import type { Analytic } from '../jobs/analytic.js';
import { readFields, readOptionalFields } from '../jobs/input-fields.js';

export interface KamcheckInput {
  videoPath: string;
  imagePath: string;
  /** The client's file names, for the log. */
  videoName: string;
  imageName: string;
  /** The upload's `callback_url`: where this job's events go too (lib/webhooks/). */
  callbackUrl?: string;
}

export const kamcheckAnalytic: Analytic<KamcheckInput> = {
  name: 'kamcheck',
  parseInput: (raw) => ({
    ...readFields(raw, { videoPath: 'string', imagePath: 'string', videoName: 'string', imageName: 'string' }),
    ...readOptionalFields(raw, { callbackUrl: 'string' }),
  }),
  timeoutMs: (_input, config) => config.kamcheckTimeoutMs,
  writesResultFiles: false,
  loadRunner: async () => (await import('./job.js')).runKamcheckJob,
};
