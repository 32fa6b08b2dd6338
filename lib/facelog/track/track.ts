// A Track: one face followed over consecutive frames, from the detections that matched it and
// the KCF tracker's boxes in between.
import type { Box, FaceDetection } from '../types.js';

/** One face record of a track in one frame (a line of the XML). */
export interface TrackFace {
  frame: number;
  box: Box;
  /** Detector confidence; on tracker-only frames, that of the track's latest detection. */
  confidence: number;
  /** true when the detector found the face in this frame, false when only KCF followed it. */
  detected: boolean;
}

export interface TrackDetection extends FaceDetection {
  frame: number;
}

export class Track {
  /** Number shown in the overlay and the XML; given when the track is confirmed (0 before). */
  number = 0;
  readonly faces: TrackFace[] = [];
  readonly detections: TrackDetection[] = [];
  /** Detector runs in a row that did not find this face. */
  misses = 0;
  ended = false;

  constructor(readonly key: number) {}

  get confirmed(): boolean {
    return this.number > 0;
  }

  get startFrame(): number {
    return this.faces[0].frame;
  }

  get lastDetectedFrame(): number {
    return this.detections[this.detections.length - 1].frame;
  }

  get endFrame(): number {
    return this.faces[this.faces.length - 1].frame;
  }

  get lastBox(): Box {
    return this.faces[this.faces.length - 1].box;
  }

  addDetection(frame: number, detection: FaceDetection): void {
    this.detections.push({ ...detection, frame });
    this.faces.push({ frame, box: detection.box, confidence: detection.score, detected: true });
    this.misses = 0;
  }

  addTracked(frame: number, box: Box): void {
    const confidence = this.detections[this.detections.length - 1].score;
    this.faces.push({ frame, box, confidence, detected: false });
  }

  /** Drops tracker-only frames after the last detection: KCF drifts once the face has gone. */
  trimTail(): void {
    const last = this.lastDetectedFrame;
    while (this.faces.length && this.faces[this.faces.length - 1].frame > last) this.faces.pop();
  }

  /** The face box at `frame`, if the track has one there. */
  boxAt(frame: number): TrackFace | undefined {
    // Faces are in frame order with at most one per frame: binary search.
    let lo = 0;
    let hi = this.faces.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const f = this.faces[mid].frame;
      if (f === frame) return this.faces[mid];
      if (f < frame) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}
