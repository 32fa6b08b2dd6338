// The tamper check as the job machinery sees it (lib/jobs/analytic.ts): no OpenCV here; the
// worker's code is loaded only in worker processes. A check is of an uploaded clip, or of a clip
// the appliance cut from a camera's stream (lib/cameras/check-schedule.ts): the same analytic and
// history. A capture that failed is a job too, which fails with the capture's reason, so that its
// outcome reaches the camera like any other.
import type { Analytic } from '../jobs/analytic.js';
import { InvalidJobInputError, readFields, readOptionalFields } from '../jobs/input-fields.js';

export interface ClipCheckInput {
  videoPath: string;
  /** The reference picture; absent when the check learns it (`learnPath`). */
  imagePath?: string;
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
  /** A stream check of a camera without a reference: the clip's quietest frame is written here and checked against. */
  learnPath?: string;
  /** A stream check: the clip's last frame is written here (JPEG), the camera's latest picture. */
  picturePath?: string;
  captureFailure?: undefined;
}

export interface FailedCaptureInput {
  /** Why the camera's stream gave no clip (lib/sources/source-failure.ts). */
  captureFailure: { code: string; message: string };
}

export type KamcheckInput = ClipCheckInput | FailedCaptureInput;

export const kamcheckAnalytic: Analytic<KamcheckInput> = {
  name: 'kamcheck',
  parseInput: (raw) => {
    const failure = (raw as { captureFailure?: unknown } | null)?.captureFailure;
    if (failure !== undefined) return { captureFailure: readFields(failure, { code: 'string', message: 'string' }) };
    const input: ClipCheckInput = {
      ...readFields(raw, { videoPath: 'string', videoName: 'string', imageName: 'string' }),
      ...readOptionalFields(raw, { imagePath: 'string', callbackUrl: 'string', refreshPath: 'string', learnPath: 'string', picturePath: 'string' }),
    };
    if (input.refreshPath === '') throw new InvalidJobInputError(`the job input's "refreshPath" is not a path`);
    if (!input.imagePath && !input.learnPath) throw new InvalidJobInputError(`the job input has neither "imagePath" nor "learnPath"`);
    return input;
  },
  timeoutMs: (_input, config) => config.kamcheckTimeoutMs,
  writesResultFiles: false,
  loadRunner: async () => (await import('./job.js')).runKamcheckJob,
};
