// The test of evidence of a one-frame input. In a video a face is confirmed by being detected again
// in later frames; a still has one frame, so the detector is asked again on other views of the same
// place: a crop around the detection, mirrored or not, the face at another size and off-centre, so
// that the model's grid of anchors and its receptive fields cut it differently. A real face is
// found again where it was; texture that happened to look like a face to one cut (a window frame,
// a dark gap between a wall and a leg) mostly is not.
//
// Each view is one forward pass of a small tile around one detection, and plays the part of a later
// detector run in a video: a still sighting's confidence is its evidence (stillEvidence, via
// sightings/sighting.ts), the detector's score held back where the face was not found again, as a
// video sighting's is held back for few detector runs. run.ts reports a still sighting when that
// is at least MIN_STILL_EVIDENCE, which keeps every reported confidence >= MIN_SIGHTING_CONFIDENCE.
import cv from '../../video/opencv.js';
import { iou } from '../geometry.js';
import type { Box, FaceDetection } from '../types.js';
import type { FaceDetector } from './detector.js';

/** One view of a detection: a square crop of `tile` px where the face is `faceWidth` px wide. */
export interface StillView {
  /** Mirrored left to right. */
  mirror: boolean;
  /** Face width in the crop, px (the model's own pixels: the crop is one tile). */
  faceWidth: number;
  /** Side of the crop, px: 128, 192 or 256 (one model tile). */
  tile: 128 | 192 | 256;
  /** Where the face's centre is in the crop, from the crop's centre, in face widths. */
  dx: number;
  dy: number;
}

/**
 * The views every still detection is seen in besides the whole-image search that found it: the
 * face 64 px wide and mirrored, 48 px and off-centre, and twice small (32 px, mirrored or not, off
 * centre), each a 128 px tile (a quarter of a 256 pass; four views cost about one 256 pass). The
 * small views matter most: texture that looks like a face at the size it was found at rarely does
 * at 32 px, a real face does (on the calibration draw, s32 alone missed no true face and all 12
 * false ones). Chosen among 10 views with `node build/scripts/bench-facelog-stills.js --seed 11
 * --candidates FILE` (every detection's score in each view; docs/benchmarks.md).
 */
export const STILL_VIEWS: readonly StillView[] = [
  { mirror: true, faceWidth: 64, tile: 128, dx: 0, dy: 0 },
  { mirror: false, faceWidth: 48, tile: 128, dx: 0.3, dy: 0.2 },
  { mirror: true, faceWidth: 32, tile: 128, dx: 0.5, dy: 0.5 },
  { mirror: false, faceWidth: 32, tile: 128, dx: -0.5, dy: 0.4 },
];

/**
 * A still's face is reported when its evidence (stillEvidence: the mean score of the search and
 * the STILL_VIEWS, 0 where a view missed it) is at least this. Measured with
 * `node build/scripts/bench-facelog-stills.js --seed 11 --candidates FILE` on the calibration draw
 * (60 stills, 141 detections): the 12 false ones had evidence 0.13-0.45, the 129 true ones
 * 0.54-0.93; 0.5 is the middle of that gap. On the held-out draw (--seed 12; 207 detections) it
 * keeps 196 of 197 true ones (the other: 0.48) and 1 of 10 false ones (0.57, a dark round cap of
 * stuff.jpg that scores 0.5-0.86 in every view).
 */
export const MIN_STILL_EVIDENCE = 0.5;

/** A view's face is the detection when their boxes (in the crop) overlap this much. */
const VIEW_MATCH_IOU = 0.4;

/**
 * The detector's score of `face` in `view` of `frame` (BGR): the best score of a face found in the
 * view's crop on the face's place, 0 if none.
 */
export function viewScore(detector: FaceDetector, frame: cv.Mat, face: Box, view: StillView): number {
  const s = view.faceWidth / face.width;
  // Crop pixel = s * (frame pixel - face centre) + crop centre - offset; mirrored: x -> tile - x.
  const cx = face.x + face.width / 2;
  const cy = face.y + face.height / 2;
  const ox = view.tile / 2 + view.dx * view.faceWidth;
  const oy = view.tile / 2 + view.dy * view.faceWidth;
  const m = view.mirror ? [[-s, 0, view.tile - ox + s * cx], [0, s, oy - s * cy]] : [[s, 0, ox - s * cx], [0, s, oy - s * cy]];
  const crop = frame.warpAffine(new cv.Mat(m, cv.CV_64F), new cv.Size(view.tile, view.tile), s < 1 ? cv.INTER_AREA : cv.INTER_LINEAR, cv.BORDER_REPLICATE);
  const fw = face.width * s;
  const fh = face.height * s;
  const expected = { x: (view.mirror ? view.tile - ox : ox) - fw / 2, y: oy - fh / 2, width: fw, height: fh };
  // One tile at scale 1: min_size 16 is the finest level's smallest face, and the region asks for
  // the tile size of the view.
  const found = detector.detect(crop, { minSize: 16, regions: [{ x: 0, y: 0, width: view.tile, height: view.tile }] });
  crop.release();
  let best = 0;
  for (const f of found) if (iou(f.box, expected) >= VIEW_MATCH_IOU) best = Math.max(best, f.score);
  return best;
}

/** The still's detections with their scores in each of `views` (FaceDetection.views). */
export function seeAgain(detector: FaceDetector, frame: cv.Mat, detections: FaceDetection[], views: readonly StillView[] = STILL_VIEWS): FaceDetection[] {
  return detections.map((d) => ({ ...d, views: views.map((v) => viewScore(detector, frame, d.box, v)) }));
}

/**
 * How sure the detector is of a still's face: the mean of its score in the whole-image search and
 * in each view, a view that missed it counting 0 (a face found in every view at 0.85 has 0.85; one
 * found only by the search at 0.7 has 0.14). It plays the part of a video sighting's confidence
 * (the mean of its best scores discounted for few detector runs): both are the detector's score,
 * held back where the face was not found again. A detection without views (a video's) has its score.
 */
export function stillEvidence(d: Pick<FaceDetection, 'score' | 'views'>): number {
  const views = d.views ?? [];
  return (d.score + views.reduce((a, b) => a + b, 0)) / (1 + views.length);
}
