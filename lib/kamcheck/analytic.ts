// The tamper check as the job machinery sees it (lib/jobs/analytic.ts): no OpenCV here; the
// worker's code is loaded only in worker processes. A check is of an uploaded clip, or of a
// camera's own stream (`stream`, lib/sources/): both are the same analytic and history.
import type { Analytic } from '../jobs/analytic.js';
import { InvalidJobInputError, readFields, readOptionalFields } from '../jobs/input-fields.js';
import { parseStreamCheckInput, type StreamCheckInput } from '../sources/stream-check-input.js';

export interface UploadCheckInput {
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
  stream?: undefined;
}

export interface StreamCheckJobInput {
  stream: StreamCheckInput;
}

export type KamcheckInput = UploadCheckInput | StreamCheckJobInput;

export const kamcheckAnalytic: Analytic<KamcheckInput> = {
  name: 'kamcheck',
  parseInput: (raw) => {
    const stream = (raw as { stream?: unknown } | null)?.stream;
    if (stream !== undefined) return { stream: parseStreamCheckInput(stream) };
    const input: UploadCheckInput = {
      ...readFields(raw, { videoPath: 'string', imagePath: 'string', videoName: 'string', imageName: 'string' }),
      ...readOptionalFields(raw, { callbackUrl: 'string', refreshPath: 'string' }),
    };
    if (input.refreshPath === '') throw new InvalidJobInputError(`the job input's "refreshPath" is not a path`);
    return input;
  },
  // A stream check may take twice SOURCE_TIMEOUT_S to capture its clip before the analysis.
  timeoutMs: (input, config) => config.kamcheckTimeoutMs + (input.stream ? 2 * config.sourceTimeoutMs : 0),
  writesResultFiles: false,
  loadRunner: async () => (await import('./job.js')).runKamcheckJob,
};
