// The tamper check: how likely is it that a camera's clip shows tampering, compared with the
// reference picture of its normal view, and why.
import cv from '../video/opencv.js';
import { measureTamper, measureWorking } from './measure.js';
import type { WorkingPicture, WorkingSize } from './cells.js';
import { combine, notJudged, scoreCauses, TamperCause, TamperCauses } from './scorer.js';
import type { TamperMeasurements } from './measure.js';

export type { TamperCauses } from './scorer.js';

export interface TamperResult {
  /** 0..100 integer. */
  probability: number;
  causes: TamperCauses;
  /** Causes the clip gave too little signal to judge (scored 0): the task's `not_judged`. */
  notJudged: TamperCause[];
}

function result(m: TamperMeasurements): TamperResult {
  const causes = scoreCauses(m);
  return { probability: combine(causes), causes, notJudged: notJudged(m) };
}

/**
 * @param frames BGR frames of the clip (1..25), all of the reference's size
 * @param reference BGR picture of the camera's normal view
 */
export function analyseTamper(frames: cv.Mat[], reference: cv.Mat): TamperResult {
  return result(measureTamper(frames, reference));
}

/** analyseTamper from pictures already at the working size (see measureWorking). */
export function analyseWorking(reference: WorkingPicture, frames: WorkingPicture[], size: WorkingSize): TamperResult {
  return result(measureWorking(reference, frames, size));
}
