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
  /** The frame of the first of those runs (null while the last run found the face). */
  missedAt: number | null = null;
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

  /**
   * Records a detection. `predicted` is where KCF had the face in this frame: KCF lags behind a
   * face that speeds up or grows (it keeps the size it was given), so the gap between its box and
   * the detection here is spread linearly back over the tracker-only frames since the previous
   * detection. The overlay and XML are written after that correction (analyse.ts delays frames).
   */
  addDetection(frame: number, detection: FaceDetection, predicted?: Box | null): void {
    if (predicted && this.detections.length > 0) this.correctDrift(frame, detection.box, predicted);
    if (this.faces.length > 0) this.fillGap(frame, detection.box);
    this.detections.push({ ...detection, frame });
    this.faces.push({ frame, box: detection.box, confidence: detection.score, detected: true });
    this.misses = 0;
    this.missedAt = null;
  }

  /** Records a detector run at `frame` that did not find the face. */
  addMiss(frame: number): void {
    if (this.misses++ === 0) this.missedAt = frame;
  }

  /** Renumbers a finished track's frames by `offset` (the analysis started at the input's frame `offset`). */
  shiftFrames(offset: number): void {
    for (const face of this.faces) face.frame += offset;
    for (const detection of this.detections) detection.frame += offset;
    if (this.missedAt !== null) this.missedAt += offset;
  }

  addTracked(frame: number, box: Box): void {
    const confidence = this.detections[this.detections.length - 1].score;
    this.faces.push({ frame, box, confidence, detected: false });
  }

  /**
   * Records faces before the track's first one (its face followed backwards in time), oldest
   * first, ending on the frame before the first.
   */
  prependTracked(boxes: { frame: number; box: Box }[]): void {
    if (boxes.length === 0) return;
    if (boxes[boxes.length - 1].frame !== this.startFrame - 1) throw new Error('prepended faces must end right before the track');
    const confidence = this.detections[0].score;
    this.faces.unshift(...boxes.map(({ frame, box }) => ({ frame, box, confidence, detected: false })));
  }

  private correctDrift(frame: number, detected: Box, predicted: Box): void {
    const from = this.lastDetectedFrame;
    const span = frame - from;
    if (span <= 1) return;
    const dx = detected.x - predicted.x;
    const dy = detected.y - predicted.y;
    const dw = detected.width - predicted.width;
    const dh = detected.height - predicted.height;
    for (let i = this.faces.length - 1; i >= 0 && this.faces[i].frame > from; i--) {
      const f = this.faces[i];
      const t = (f.frame - from) / span;
      f.box = { x: f.box.x + dx * t, y: f.box.y + dy * t, width: f.box.width + dw * t, height: f.box.height + dh * t };
    }
  }

  /** Frames since the last record without a box (KCF lost the face) get one interpolated towards the detection. */
  private fillGap(frame: number, detected: Box): void {
    const last = this.faces[this.faces.length - 1];
    const span = frame - last.frame;
    for (let f = last.frame + 1; f < frame; f++) {
      const t = (f - last.frame) / span;
      const a = last.box;
      const box = { x: a.x + (detected.x - a.x) * t, y: a.y + (detected.y - a.y) * t, width: a.width + (detected.width - a.width) * t, height: a.height + (detected.height - a.height) * t };
      this.faces.push({ frame: f, box, confidence: last.confidence, detected: false });
    }
  }

  /**
   * Drops the tracker-only frames from the first detector run that missed the face on (KCF drifts
   * once the face has gone), and from `before` on if given (where the face left the frame). The
   * frames between the last detection and that run stay: the face was there as far as anything
   * tells, and it is usually still there (walking out, fading behind a door).
   */
  trimTail(before = Infinity): void {
    const from = Math.min(before, this.missedAt ?? Infinity);
    while (this.faces.length && this.faces[this.faces.length - 1].frame >= from && !this.faces[this.faces.length - 1].detected) this.faces.pop();
  }

  /** Drops the tracker-only frames after the last detection (before the track is extended by a jump). */
  trimToLastDetection(): void {
    this.trimTail(this.lastDetectedFrame + 1);
  }

  /**
   * Where the face should be at `frame` if it keeps the speed and growth it had between its last
   * two detections (a face walking towards the camera speeds up across the image as it grows).
   */
  extrapolate(frame: number): Box {
    const n = this.detections.length;
    const last = this.detections[n - 1];
    if (n < 2) return last.box;
    const prev = this.detections[n - 2];
    const k = (frame - last.frame) / Math.max(1, last.frame - prev.frame);
    const a = prev.box;
    const b = last.box;
    return { x: b.x + (b.x - a.x) * k, y: b.y + (b.y - a.y) * k, width: b.width + (b.width - a.width) * k, height: b.height + (b.height - a.height) * k };
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
