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
   * Where the worker writes the clip's scene without its passers-by (JPEG, full size; refresh.ts)
   * when the check's probability is under `refreshBelow`: a camera's next reference. Absent in
   * uploads with their own reference and in records stored before cameras existed.
   */
  refreshPath?: string;
  /** 1 (a check of 0) when absent; more for a time-of-day slot's first reference (lib/cameras/check-setup.ts). */
  refreshBelow?: number;
  /** A stream check of a camera without a reference: the clip's renewal picture is written here and checked against. */
  learnPath?: string;
  /** A stream check: the clip's last frame is written here (JPEG), the camera's latest picture. */
  picturePath?: string;
  /** The camera's areas to ignore (its settings): polygons of [x, y] fractions of the picture. */
  ignoreAreas?: [number, number][][];
  /** False: the camera does not count a picture too dark to judge as tampering. */
  darkIsTamper?: boolean;
  /** A camera check against a reference the appliance made: the older one an alarm is checked against (lib/cameras/check-setup.ts). */
  secondOpinion?: SecondOpinionInput;
  captureFailure?: undefined;
}

/**
 * A check whose probability reaches `from` against a reference the appliance renewed or learned
 * (`setAside`, its id) is checked again against the slot's older reference (`imagePath`,
 * presented as `reference`; lib/cameras/check-setup.ts). Quiet there (under half of `from`:
 * setsAside, run.ts), the older one's answer is the check's, and the renewed one leaves its slot
 * (lib/cameras/check-outcome.ts): what alarms against a picture the appliance made and not against
 * the one before it is in that picture, such as a car's light that lingered through the renewal's
 * clip. Tampering shows against both.
 */
export interface SecondOpinionInput {
  imagePath: string;
  /** The older reference as the task presents it. */
  reference: Record<string, unknown>;
  /** The id of the reference checked first, which leaves its slot when the clip is quiet against the older one. */
  setAside: string;
  /** The camera's alarm line. */
  from: number;
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
    const extra = raw as { ignoreAreas?: unknown; darkIsTamper?: unknown; refreshBelow?: unknown; secondOpinion?: unknown };
    if (extra.secondOpinion !== undefined) {
      const second = readFields(extra.secondOpinion, { imagePath: 'string', setAside: 'string', from: 'number' });
      const reference = (extra.secondOpinion as { reference?: unknown }).reference;
      if (typeof reference !== 'object' || reference === null || Array.isArray(reference)) {
        throw new InvalidJobInputError(`the job input's "secondOpinion" has no "reference"`);
      }
      if (!Number.isInteger(second.from) || second.from < 1 || second.from > 100) {
        throw new InvalidJobInputError(`the job input's "secondOpinion.from" is not a whole number from 1 to 100`);
      }
      input.secondOpinion = { ...second, reference: reference as Record<string, unknown> };
    }
    if (extra.ignoreAreas !== undefined) input.ignoreAreas = readAreas(extra.ignoreAreas);
    if (extra.darkIsTamper !== undefined) {
      if (typeof extra.darkIsTamper !== 'boolean') throw new InvalidJobInputError(`the job input's "darkIsTamper" is not true or false`);
      input.darkIsTamper = extra.darkIsTamper;
    }
    if (extra.refreshBelow !== undefined) {
      const below = extra.refreshBelow;
      if (typeof below !== 'number' || !Number.isInteger(below) || below < 1 || below > 100) {
        throw new InvalidJobInputError(`the job input's "refreshBelow" is not a whole number from 1 to 100`);
      }
      input.refreshBelow = below;
    }
    if (input.refreshPath === '') throw new InvalidJobInputError(`the job input's "refreshPath" is not a path`);
    if (!input.imagePath && !input.learnPath) throw new InvalidJobInputError(`the job input has neither "imagePath" nor "learnPath"`);
    return input;
  },
  timeoutMs: (_input, config) => config.kamcheckTimeoutMs,
  writesResultFiles: false,
  loadRunner: async () => (await import('./job.js')).runKamcheckJob,
};

function readAreas(raw: unknown): [number, number][][] {
  const point = (p: unknown) => Array.isArray(p) && p.length === 2 && p.every((v) => typeof v === 'number' && v >= 0 && v <= 1);
  if (!Array.isArray(raw) || !raw.every((a) => Array.isArray(a) && a.length >= 3 && a.every(point))) {
    throw new InvalidJobInputError(`the job input's "ignoreAreas" are not polygons of [x, y] points from 0 to 1`);
  }
  return raw as [number, number][][];
}
