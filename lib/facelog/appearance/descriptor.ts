// Face descriptors for telling people apart: face-api's FaceRecognitionNet (128-d, after dlib's
// ResNet face descriptor), converted to ONNX by testkit/models/face-recognition-net.ts.
//
// Crop: face-api's own (FaceLandmarks.alignDlib, used by withFaceDescriptors): a square of side
// eye-to-mouth distance / 0.45 with the centroid of eyes and mouth at 0.5 of its width and 0.43 of
// its height, resized to 150 px. Here the face is also turned upright by its eye line first (a face
// rolled 30 degrees keeps its descriptor within 0.04; cropped unturned, as face-api does, it moves
// by 0.56). That needs the detector's eye and mouth keypoints (BlazeFace gives them). Without them
// the crop is placed from the detector's box by BOX_POSE (face-crop.ts), which assumes BlazeFace's
// box (square, about 2.05 eye-to-mouth distances tall, its centre 0.15 of them below the centroid
// of eyes and mouth: roughly brows to chin); such box-only descriptors are 0.30 (median)
// from the keypoint ones on upright faces, so descriptors to be compared should come from faces
// with keypoints.
import type cv from '../../video/opencv.js';
import type { FaceDetectorRuntime } from '../../config.js';
import type { FaceDetection } from '../types.js';
import { cropFace, facePose, type CropExtent } from './face-crop.js';
import { loadFaceNet } from './face-net.js';

export const DESCRIPTOR_FILE = 'face-descriptor.onnx';
export const DESCRIPTOR_INPUT_SIZE = 150;
export const DESCRIPTOR_LENGTH = 128;

/** face-api's alignDlib box in the face frame: side 1 / 0.45, centroid at (0.5, 0.43) of it. */
export const DESCRIPTOR_CROP: CropExtent = {
  left: -0.5 / 0.45,
  right: 0.5 / 0.45,
  top: -0.43 / 0.45,
  bottom: 0.57 / 0.45,
};

/**
 * face-api's documented match threshold: below this Euclidean distance it calls two descriptors
 * the same person (FaceMatcher's default distanceThreshold, dlib's value for its descriptor). It
 * is the scale descriptor distances are read on; the stitcher joins tracks below a stricter
 * STITCH_JOIN_DISTANCE (sightings/stitch.ts). Measured with this module on
 * @vladmandic/human's screenshot-facematch.jpg (faces about 60 px wide, keypoints at face-api's
 * eye and mouth centres): one man in 10 photos, 45 pairs, median 0.41, max 0.49; him against 14
 * other people, 140 pairs, median 0.76, min 0.58, 2 below 0.6 (test/35.face-models.test.ts).
 */
export const FACE_API_MATCH_DISTANCE = 0.6;

export interface FaceDescriber {
  /** The 128-d descriptor of a face in a BGR frame. */
  describe(frame: cv.Mat, face: FaceDetection): Float32Array;
}

export function createFaceDescriber(modelDir: string, runtime?: FaceDetectorRuntime): FaceDescriber {
  const net = loadFaceNet(modelDir, DESCRIPTOR_FILE, DESCRIPTOR_INPUT_SIZE, runtime);
  return {
    describe(frame, face) {
      const crop = cropFace(frame, facePose(face), DESCRIPTOR_CROP, DESCRIPTOR_INPUT_SIZE);
      return net.run(crop, 'descriptor', DESCRIPTOR_LENGTH);
    },
  };
}

/** Euclidean distance, as face-api's euclideanDistance (see FACE_API_MATCH_DISTANCE for its scale). */
export function descriptorDistance(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`descriptors of ${a.length} and ${b.length} values`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return Math.sqrt(sum);
}
