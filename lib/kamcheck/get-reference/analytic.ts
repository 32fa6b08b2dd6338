// The original service's reference picker (`POST /kamcheck_get_reference`) as the job machinery
// sees it (lib/jobs/analytic.ts): a clip in, its quietest frame out, as a JPEG of the clip's size
// that a later tamper check takes as its `image`. No OpenCV here; the worker's code is loaded only
// in worker processes.
import type { Analytic } from '../../jobs/analytic.js';
import { readFields, readOptionalFields } from '../../jobs/input-fields.js';

export interface ReferencePickInput {
  jobId: string;
  videoPath: string;
  /** The client's file name, for the log. */
  videoName: string;
  resultsDir: string;
  /** The upload's `callback_url`: where this job's events go too (lib/webhooks/). */
  callbackUrl?: string;
}

export const kamcheckReferenceAnalytic: Analytic<ReferencePickInput> = {
  name: 'kamcheck_get_reference',
  parseInput: (raw) => ({
    ...readFields(raw, { jobId: 'string', videoPath: 'string', videoName: 'string', resultsDir: 'string' }),
    ...readOptionalFields(raw, { callbackUrl: 'string' }),
  }),
  // A clip of at most MAX_REFERENCE_CLIP_FRAMES decodes well within a tamper check's limit.
  timeoutMs: (_input, config) => config.kamcheckTimeoutMs,
  writesResultFiles: true,
  loadRunner: async () => (await import('./job.js')).runReferencePickJob,
};
