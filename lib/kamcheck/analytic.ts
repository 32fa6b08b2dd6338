// The tamper check as the job machinery sees it (lib/jobs/analytic.ts): no OpenCV here; the
// worker's code is loaded only in worker processes.
import type { Analytic } from '../jobs/analytic.js';
import { InvalidJobInputError, readFields, readOptionalFields } from '../jobs/input-fields.js';

export interface KamcheckInput {
  videoPath: string;
  imagePath: string;
  /** The client's file names, for the log. */
  videoName: string;
  imageName: string;
  /** The upload's `callback_url`: where this job's events go too (lib/webhooks/). */
  callbackUrl?: string;
  /**
   * Where the worker writes the clip's quietest frame (JPEG, full size) when the check finds
   * probability 0: a camera's next reference. Absent in uploads with their own reference and in
   * records stored before cameras existed.
   */
  refreshPath?: string;
}

export const kamcheckAnalytic: Analytic<KamcheckInput> = {
  name: 'kamcheck',
  parseInput: (raw) => {
    const input: KamcheckInput = {
      ...readFields(raw, { videoPath: 'string', imagePath: 'string', videoName: 'string', imageName: 'string' }),
      ...readOptionalFields(raw, { callbackUrl: 'string', refreshPath: 'string' }),
    };
    if (input.refreshPath === '') throw new InvalidJobInputError(`the job input's "refreshPath" is not a path`);
    return input;
  },
  timeoutMs: (_input, config) => config.kamcheckTimeoutMs,
  writesResultFiles: false,
  loadRunner: async () => (await import('./job.js')).runKamcheckJob,
};
