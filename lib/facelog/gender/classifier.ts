// Gender of a face: face-api's AgeGenderNet (TinyXception), converted to ONNX by
// testkit/models/age-gender-net.ts; only its gender output is used.
//
// Crop: face-api's age/gender path takes the 68 landmarks' bounding box grown by 10% on each side
// (FaceLandmarks.align()), pads it to a square with black and resizes to 112 px. That box is
// expressed here in the face frame (face-crop.ts) from its measured median position, so it follows
// from BlazeFace's eye and mouth keypoints; the face is also turned upright first. Without keypoints
// the box places it (face-crop.ts, BOX_POSE): 0.03 from the keypoint result (median, upright faces).
//
// Measured (test/35.face-models.test.ts): 16 men of @vladmandic/human's screenshot-facematch.jpg
// 0.67-0.99 male, 11 women there and in face-api's demo/sample1.jpg 0.04-0.12; the 19 women of
// face-api's demo/sample2-6.jpg at most 0.28.
import type { FaceDetectorRuntime } from '../../config.js';
import type { FaceDetection } from '../types.js';
import { cropFace, facePose, type CropExtent } from '../appearance/face-crop.js';
import { loadFaceNet } from '../appearance/face-net.js';
import { fromLogOdds, logOdds } from './aggregate.js';
import cv from '../../video/opencv.js';
import { lift, liftGain, meanGrey } from '../low-light.js';

export const GENDER_FILE = 'gender.onnx';
export const GENDER_INPUT_SIZE = 112;

/**
 * face-api's padded landmark box in the face frame (units of the eye-to-mouth distance from the
 * centroid of eyes and mouth): medians over the 71 faces that face-api's SSD finds with score > 0.5
 * in @vladmandic/human's screenshot-facematch.jpg, with its 68-landmark net (medians left -1.27,
 * right 1.28, top -0.79, bottom 1.34; quartiles -1.42..-1.07, 1.12..1.46, -0.85..-0.76, 1.26..1.38:
 * the sides move with the head's yaw). Wider than tall, so face-api adds black bars above and below.
 */
export const GENDER_CROP: CropExtent = { left: -1.27, right: 1.27, top: -0.79, bottom: 1.34 };

/**
 * The middle of the crop, where the face is (the crop's black bars and hair left out): what a dark
 * face's gain is measured on.
 */
const FACE_MIDDLE = { from: 0.25, size: 0.5 };
/**
 * A face that needs more than this gain (low-light.ts) is lifted, and smoothed first (Gaussian,
 * DENOISE_SIGMA crop pixels), since its noise grows with the gain; a lighter face is left as it is.
 * Measured per vote (faces >= 40 px wide, six per appearance, detected as in the face log), right:
 * - the night set's 416 votes: as they are 91.8%; lifted and smoothed above a gain of 2 93.3%
 *   (the darkest videos at 720p 85% against 95%); every face lifted towards 127 and smoothed
 *   above 2 95.0%;
 * - the bench set's 628 votes by day: as they are 95.5%; above a gain of 2 the same votes; every
 *   face lifted 94.1%, above 1.5 94.4%: a lit face lifted further is read worse.
 */
const DARK_FACE_GAIN = 2;
const DENOISE_SIGMA = 1.2;

/** The crop as the net should see it: a dark face smoothed and lifted (low-light.ts). */
export function litCrop(crop: cv.Mat): cv.Mat {
  const at = Math.round(FACE_MIDDLE.from * crop.cols);
  const side = Math.round(FACE_MIDDLE.size * crop.cols);
  const gain = liftGain(meanGrey(crop.getRegion(new cv.Rect(at, at, side, side))));
  if (gain <= DARK_FACE_GAIN) return crop;
  // mirrored at the crop's border: opencv4nodejs pads with black unless told, a dark frame round the face
  return lift(crop.gaussianBlur(new cv.Size(0, 0), DENOISE_SIGMA, DENOISE_SIGMA, cv.BORDER_REFLECT_101), gain);
}

export interface GenderClassifier {
  /**
   * Probability 0..1 that the face is male: face-api's softmax output for "male" on the crop and on
   * its mirror image, averaged as log-odds. `views` holds the two outputs (plain, mirrored).
   */
  classify(frame: cv.Mat, face: FaceDetection): { male: number; views: [number, number] };
}

export function createGenderClassifier(modelDir: string, runtime?: FaceDetectorRuntime): GenderClassifier {
  const net = loadFaceNet(modelDir, GENDER_FILE, GENDER_INPUT_SIZE, runtime);
  return {
    classify(frame, face) {
      const crop = litCrop(cropFace(frame, facePose(face), GENDER_CROP, GENDER_INPUT_SIZE));
      // Output `gender` is [male, female], a softmax. The mirror image is the same face to a
      // person but not to the net: averaging both steadies a view that happens to sit near the
      // boundary. Measured on the bench set's 534 gender votes, with the mirror against without:
      // per vote, men 94.3% against 91.7% and women 96.7% against 94.8% correct; per sighting, men
      // 45/47 against 42/47, women 46/46 both ways. Costs one more forward pass per vote (6 ms on
      // one core in OpenCV DNN, 1.4 ms in onnxruntime): the bench set's 11,144 frames make 763 votes.
      const views: [number, number] = [net.run(crop, 'gender', 2)[0], net.run(crop.flip(1), 'gender', 2)[0]];
      return { male: fromLogOdds((logOdds(views[0]) + logOdds(views[1])) / 2), views };
    },
  };
}
