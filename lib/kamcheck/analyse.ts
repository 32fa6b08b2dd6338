// The tamper check: how likely is it that a camera's clip shows tampering, compared with the
// reference picture of its normal view, and why.
import cv from '../video/opencv.js';
import { measureTamper, measureWorking } from './measure.js';
import type { WorkingPicture, WorkingSize } from './cells.js';
import { combine, notCounted, notJudged, scoreCauses, tooDark, TamperCause, TamperCauses } from './scorer.js';
import type { TamperMeasurements } from './measure.js';
import type { Ignored } from './ignored.js';

export type { TamperCauses } from './scorer.js';

export interface TamperResult {
  /** 0..100 integer. */
  probability: number;
  causes: TamperCauses;
  /** Causes the clip gave too little signal to judge (scored 0): the task's `not_judged`. */
  notJudged: TamperCause[];
  /** The picture is too dark to judge (black, or too dark for its focus to be judged): the task's `too_dark`. */
  tooDark: boolean;
  /** Causes scored but left out of the probability by the camera's settings: the task's `not_counted`. */
  notCounted: TamperCause[];
}

/** What a camera's settings change in its checks' analysis. */
export interface CheckSettings {
  /** The camera's ignored areas at the working size (ignored.ts); null for none. */
  ignored: Ignored | null;
  /** Whether a picture too dark to judge counts as tampering (true by default). */
  darkIsTamper: boolean;
}

const NO_SETTINGS: CheckSettings = { ignored: null, darkIsTamper: true };

function result(m: TamperMeasurements, settings: CheckSettings): TamperResult {
  const causes = scoreCauses(m);
  const leftOut = notCounted(m, settings.darkIsTamper);
  return { probability: combine(causes, leftOut), causes, notJudged: notJudged(m), tooDark: tooDark(m), notCounted: leftOut };
}

/**
 * @param frames BGR frames of the clip (1..25), all of the reference's size
 * @param reference BGR picture of the camera's normal view
 */
export function analyseTamper(frames: cv.Mat[], reference: cv.Mat, settings: CheckSettings = NO_SETTINGS): TamperResult {
  return result(measureTamper(frames, reference, settings.ignored), settings);
}

/** analyseTamper from pictures already at the working size (see measureWorking). */
export function analyseWorking(reference: WorkingPicture, frames: WorkingPicture[], size: WorkingSize, settings: CheckSettings = NO_SETTINGS): TamperResult {
  return result(measureWorking(reference, frames, size, settings.ignored), settings);
}
