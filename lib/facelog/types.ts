// The face log's shared vocabulary: what each stage of the pipeline hands to the next.
// Coordinates are pixels of the full input frame; boxes are axis-aligned, x/y the top-left corner.

export interface Point {
  x: number;
  y: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** BlazeFace's six keypoints, as the person sees them: `rightEye` is on the image's left. */
export interface FaceLandmarks {
  rightEye: Point;
  leftEye: Point;
  nose: Point;
  mouth: Point;
  rightEar: Point;
  leftEar: Point;
}

/** One face found by the detector in one frame. */
export interface FaceDetection {
  box: Box;
  /** Detector confidence, 0..1. */
  score: number;
  landmarks?: FaceLandmarks;
  /** A still's detection: the detector's scores of it in the still's other views, 0 where missed (detect/still-evidence.ts). */
  views?: number[];
}

/** A tracked face where the detector looks for it again: its last box. */
export interface TrackedFace extends Box {
  /** The detector missed it at its last run: KCF may have lost it, so look further around. */
  lost?: boolean;
  /** Where the face's own motion (its last detections) puts it now: looked at too. */
  moving?: Box;
}

export interface DetectOptions {
  /** Smallest face width to find, in input pixels (the API's `min_size`, at least 30). */
  minSize: number;
  /** Where to look; the whole frame when absent (e.g. regions with motion on a static camera). */
  regions?: Box[];
  /**
   * Faces already tracked (their last boxes): each is looked for again only around itself, in one
   * small tile at a scale that suits its size. Implies region mode: with `faces` and no `regions`,
   * only the faces are looked at.
   */
  faces?: TrackedFace[];
  /**
   * With `regions`: also look at part `index` of `of` equal shares of the whole-frame search, so
   * that successive calls with index 0..of-1 cover the whole frame between them.
   */
  scanPart?: { index: number; of: number };
}
