// The tamper check: how likely is it that a camera's clip shows tampering, compared with the
// reference picture of its normal view, and why.
import cv from '../video/opencv.js';
import { measureTamper, measureWorking } from './measure.js';
import type { WorkingPicture, WorkingSize } from './cells.js';
import { combine, scoreCauses, TamperCauses } from './scorer.js';

export type { TamperCauses } from './scorer.js';

export interface TamperResult {
  /** 0..100 integer. */
  probability: number;
  causes: TamperCauses;
}

/**
 * @param frames BGR frames of the clip (1..25), all of the reference's size
 * @param reference BGR picture of the camera's normal view
 */
export function analyseTamper(frames: cv.Mat[], reference: cv.Mat): TamperResult {
  const causes = scoreCauses(measureTamper(frames, reference));
  return { probability: combine(causes), causes };
}

/** analyseTamper from pictures already at the working size (see measureWorking). */
export function analyseWorking(reference: WorkingPicture, frames: WorkingPicture[], size: WorkingSize): TamperResult {
  const causes = scoreCauses(measureWorking(reference, frames, size));
  return { probability: combine(causes), causes };
}
