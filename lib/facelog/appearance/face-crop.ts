// Square face crops for face-api's nets, cut the way face-api cuts them, but turned upright first.
//
// Geometry is expressed in a "face frame" set by the eyes and the mouth: origin at the centroid of
// the two eye centres and the mouth centre, unit the mean eye-to-mouth distance, x along the line
// from the image-left eye to the image-right eye. face-api derives both of its crops from 68
// landmarks; their eye and mouth centres are the points BlazeFace gives, so the same crops follow
// from BlazeFace's keypoints. The crop is cut with one warpAffine that also turns the face upright:
// face-api does not, but the descriptor net is dlib's, trained on face chips turned upright, and
// a rolled face then keeps its descriptor (measured in descriptor.ts).
import cv from '../../video/opencv.js';
import type { Box, FaceDetection, Point } from '../types.js';

/** A crop's extent in the face frame (units of the eye-to-mouth distance, y down). */
export interface CropExtent {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** Where a face is: its frame's origin and unit in pixels, and its roll in radians. */
export interface FacePose {
  center: Point;
  unit: number;
  angle: number;
}

/**
 * How BlazeFace's box relates to the face frame, for detections without keypoints. Medians over the
 * 122 detections with score >= 0.75 and roll <= 15 degrees that lib/facelog/detect/blazeface.ts
 * finds in the face-api demo photos and @vladmandic/human's samples.jpg and
 * screenshot-facematch.jpg (the box is square; quartiles of centerY -0.090..-0.060, of unit
 * 0.481..0.495). On the same faces BlazeFace's eye and mouth keypoints lie within 0.05 units
 * (median) of the eye and mouth centres of face-api's 68 landmarks, and their unit is 1.025 times
 * face-api's: the crops below follow from either.
 */
export const BOX_POSE = {
  /** Frame origin below the box centre, as a share of the box height (negative: above). */
  centerY: -0.074,
  /** Eye-to-mouth distance as a share of the box height. */
  unit: 0.487,
};

/** Below this many pixels between eyes and mouth the keypoints say nothing reliable. */
const MIN_KEYPOINT_UNIT = 3;

/**
 * Keypoints whose eye-to-mouth distance is outside this share of the box height are not believed
 * (a keypoint on a wrong feature); the box then decides. BOX_POSE.unit, 0.49, is the typical value
 * and its quartiles are within 0.02 of it.
 */
const KEYPOINT_UNIT_RANGE = [0.3, 0.7] as const;

/** The face frame from BlazeFace's eye and mouth keypoints, or from the box when they are missing or implausible. */
export function facePose(face: FaceDetection): FacePose {
  const k = face.landmarks;
  if (k) {
    const center = {
      x: (k.rightEye.x + k.leftEye.x + k.mouth.x) / 3,
      y: (k.rightEye.y + k.leftEye.y + k.mouth.y) / 3,
    };
    const unit = (distance(k.mouth, k.rightEye) + distance(k.mouth, k.leftEye)) / 2;
    const share = unit / face.box.height;
    if (unit >= MIN_KEYPOINT_UNIT && share >= KEYPOINT_UNIT_RANGE[0] && share <= KEYPOINT_UNIT_RANGE[1]) {
      return { center, unit, angle: Math.atan2(k.leftEye.y - k.rightEye.y, k.leftEye.x - k.rightEye.x) };
    }
  }
  return boxPose(face.box);
}

export function boxPose(box: Box): FacePose {
  return {
    center: { x: box.x + box.width / 2, y: box.y + box.height * (0.5 + BOX_POSE.centerY) },
    unit: box.height * BOX_POSE.unit,
    angle: 0,
  };
}

/**
 * Source pixels per crop pixel above which the face is first shrunk with area averaging: bilinear
 * sampling alone reads only the 2x2 pixels around each sample and, further apart than that, skips
 * the rest and aliases (face-api's resizeBilinear does). Not measurable on the package photos, where
 * no face needs more than 1.5; on them upscaled 2-3x, the descriptor stays within 0.035 of the
 * original either way (test/35.face-models.test.ts).
 */
const MAX_BILINEAR_STEP = 1.5;

/**
 * The crop `extent` of the face, upright, as a size x size BGR image. A non-square extent is
 * centred in the square and the rest is black, as face-api's padToSquare does; so is anything
 * outside the frame.
 */
export function cropFace(frame: cv.Mat, pose: FacePose, extent: CropExtent, size: number): cv.Mat {
  const bgr = frame.channels === 1 ? frame.cvtColor(cv.COLOR_GRAY2BGR) : frame;
  const width = (extent.right - extent.left) * pose.unit;
  const height = (extent.bottom - extent.top) * pose.unit;
  const side = Math.max(width, height);
  // A degenerate face (zero or non-finite size) has nothing to show.
  if (!(side > 0 && Number.isFinite(side) && Number.isFinite(pose.center.x + pose.center.y + pose.angle))) {
    return new cv.Mat(size, size, cv.CV_8UC3, [0, 0, 0]);
  }
  const step = side / size; // source pixels per crop pixel
  // The square's top-left corner in the upright face frame, in pixels from the frame's origin.
  const left = ((extent.left + extent.right) / 2) * pose.unit - side / 2;
  const top = ((extent.top + extent.bottom) / 2) * pose.unit - side / 2;
  const cos = Math.cos(pose.angle);
  const sin = Math.sin(pose.angle);
  // Crop pixel (u, v) samples the source at centre + R(angle)·(left + (u + ½)·step, top + (v + ½)·step)
  // in continuous coordinates (pixel i spans [i, i + 1)), i.e. at that point − ½ as a pixel index.
  const a = [step * cos, -step * sin, step * sin, step * cos];
  const t = {
    x: pose.center.x + cos * (left + step / 2) - sin * (top + step / 2) - 0.5,
    y: pose.center.y + sin * (left + step / 2) + cos * (top + step / 2) - 0.5,
  };

  let source = bgr;
  // Source pixel index = origin + (index in `source` + ½)·scale − ½; the identity unless shrunk.
  let origin = { x: 0, y: 0 };
  let scale = { x: 1, y: 1 };
  if (step > MAX_BILINEAR_STEP) {
    // Shrink only the part of the frame under the crop (its rotated corners, plus a margin).
    const corners = [0, size].flatMap((u) => [0, size].map((v) => ({ x: a[0] * u + a[1] * v + t.x, y: a[2] * u + a[3] * v + t.y })));
    const margin = 2 * step;
    const x0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p.x)) - margin));
    const y0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p.y)) - margin));
    const x1 = Math.min(bgr.cols, Math.ceil(Math.max(...corners.map((p) => p.x)) + margin));
    const y1 = Math.min(bgr.rows, Math.ceil(Math.max(...corners.map((p) => p.y)) + margin));
    if (x1 - x0 < 2 || y1 - y0 < 2) return new cv.Mat(size, size, cv.CV_8UC3, [0, 0, 0]);
    const cols = Math.max(1, Math.round((x1 - x0) / step));
    const rows = Math.max(1, Math.round((y1 - y0) / step));
    source = bgr.getRegion(new cv.Rect(x0, y0, x1 - x0, y1 - y0)).resize(rows, cols, 0, 0, cv.INTER_AREA);
    origin = { x: x0, y: y0 };
    scale = { x: (x1 - x0) / cols, y: (y1 - y0) / rows };
  }
  const matrix = new cv.Mat(
    [
      [a[0] / scale.x, a[1] / scale.x, (t.x - origin.x + 0.5) / scale.x - 0.5],
      [a[2] / scale.y, a[3] / scale.y, (t.y - origin.y + 0.5) / scale.y - 0.5],
    ],
    cv.CV_64F,
  );
  const crop = source.warpAffine(
    matrix,
    new cv.Size(size, size),
    cv.INTER_LINEAR | cv.WARP_INVERSE_MAP,
    cv.BORDER_CONSTANT,
    new cv.Vec3(0, 0, 0),
  );
  blackOutside(crop, {
    x0: (extent.left * pose.unit - left) / step,
    x1: (extent.right * pose.unit - left) / step,
    y0: (extent.top * pose.unit - top) / step,
    y1: (extent.bottom * pose.unit - top) / step,
  });
  return crop;
}

/** face-api's padToSquare: the square's part outside the crop's own extent is black. */
function blackOutside(crop: cv.Mat, inside: { x0: number; x1: number; y0: number; y1: number }): void {
  const n = crop.cols;
  const black = new cv.Vec3(0, 0, 0);
  const x0 = Math.round(inside.x0);
  const x1 = Math.round(inside.x1);
  const y0 = Math.round(inside.y0);
  const y1 = Math.round(inside.y1);
  const fill = (x: number, y: number, w: number, h: number) => {
    if (w > 0 && h > 0) crop.drawRectangle(new cv.Rect(x, y, w, h), black, -1);
  };
  fill(0, 0, n, y0);
  fill(0, y1, n, n - y1);
  fill(0, 0, x0, n);
  fill(x1, 0, n - x1, n);
}

function distance(a: Point, b: Point): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}
