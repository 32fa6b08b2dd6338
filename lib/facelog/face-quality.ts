// How good a detected face is for describing, classifying and showing: large, confidently
// detected and frontal faces first.
import type { FaceDetection } from './types.js';

/** Width at which a face is as good as it gets: the descriptor's input is 150 px, gender's 112. */
const FULL_QUALITY_WIDTH = 112;
/** Frontalness assumed when the detector gave no keypoints. */
const UNKNOWN_FRONTALNESS = 0.7;

/** 0..1: 1 for a frontal face >= FULL_QUALITY_WIDTH wide detected with certainty. */
export function faceQuality(face: FaceDetection): number {
  return face.score * Math.min(1, face.box.width / FULL_QUALITY_WIDTH) * frontalness(face);
}

/**
 * 1 when the nose is midway between the eyes (frontal), falling to 0 when it is level with one
 * eye (about 45 degrees of yaw).
 */
export function frontalness(face: FaceDetection): number {
  const l = face.landmarks;
  if (!l) return UNKNOWN_FRONTALNESS;
  const eyeDistance = Math.hypot(l.leftEye.x - l.rightEye.x, l.leftEye.y - l.rightEye.y);
  if (eyeDistance < 1) return UNKNOWN_FRONTALNESS;
  const offset = Math.abs(l.nose.x - (l.leftEye.x + l.rightEye.x) / 2) / (eyeDistance / 2);
  return Math.max(0, 1 - offset);
}
