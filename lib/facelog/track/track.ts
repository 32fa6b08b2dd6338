// A Track: one face followed over consecutive frames, from the detections that matched it and
// the KCF tracker's boxes in between.
import type { Box, FaceDetection } from '../types.js';
import { PackedFaces, indexOfFrame } from './packed-faces.js';
import type { FaceSpill } from './face-spill.js';

/** Best detector scores an ended track keeps (a sighting's confidence averages its best 5). */
export const KEPT_SCORES = 5;

/** What a still's sighting reads of a detection (detect/still-evidence.ts). */
export type ViewedScores = Pick<FaceDetection, 'score' | 'views'>;

/** What an ended track keeps of its detections. */
interface DetectionSummary {
  count: number;
  /** The best KEPT_SCORES scores, best first. */
  best: number[];
  /** A still's detections' scores, with the detector's scores in its other views. */
  viewed: ViewedScores[];
}

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
  /** The face records while the track runs; packed once it has ended (pack()). */
  private list: TrackFace[] = [];
  private packed: PackedFaces | null = null;
  /** The detections of a running track; emptied when it ends, which keeps their summary. */
  readonly detections: TrackDetection[] = [];
  private summary: DetectionSummary | null = null;
  /** Detector runs in a row that did not find this face. */
  misses = 0;
  /** The frame of the first of those runs (null while the last run found the face). */
  missedAt: number | null = null;
  ended = false;

  constructor(readonly key: number) {}

  get confirmed(): boolean {
    return this.number > 0;
  }

  /** The face records in frame order (new objects each time once the track is packed). */
  get faces(): readonly TrackFace[] {
    return this.packed?.all() ?? this.list;
  }

  get faceCount(): number {
    return this.packed?.length ?? this.list.length;
  }

  /** The record at `i` of the track's faces (in frame order). */
  faceAt(i: number): TrackFace {
    return this.packed?.at(i) ?? this.list[i];
  }

  /** The frame of the record at `i`. */
  frameAt(i: number): number {
    return this.packed?.frameAt(i) ?? this.list[i].frame;
  }

  get startFrame(): number {
    return this.frameAt(0);
  }

  /** The frame of the track's first detection: its start, unless it was followed back from there (prependTracked); -1 before one. */
  firstDetectedFrame = -1;

  /** Detections of the track, also once it has ended. */
  get detectionCount(): number {
    return this.summary?.count ?? this.detections.length;
  }

  /** Its detector scores, best first: all of a running track's, the best KEPT_SCORES of an ended one's. */
  bestScores(): number[] {
    return this.summary?.best ?? this.detections.map((d) => d.score).sort((a, b) => b - a);
  }

  /** The detections that carry views (a still's, detect/still-evidence.ts); none of a video's. */
  viewedDetections(): readonly ViewedScores[] {
    return this.summary?.viewed ?? this.detections.filter((d) => d.views);
  }

  get lastDetectedFrame(): number {
    return this.detections[this.detections.length - 1].frame;
  }

  get endFrame(): number {
    return this.frameAt(this.faceCount - 1);
  }

  get lastBox(): Box {
    return this.faceAt(this.faceCount - 1).box;
  }

  /**
   * Packs an ended track's face records (packed-faces.ts) and sums up its detections, which only
   * the analysis of a live track reads in full: what a finished track keeps in memory until the
   * end of the job is then 4 bytes a face and a few numbers, the rest of its face records going
   * to `spill` (41 bytes a face; kept in memory without one).
   */
  pack(spill: FaceSpill | null = null): void {
    if (this.packed) return;
    this.packed = new PackedFaces(this.list, spill);
    this.list = [];
    const viewed = this.viewedDetections().map(({ score, views }) => ({ score, views }));
    this.summary = { count: this.detections.length, best: this.bestScores().slice(0, KEPT_SCORES), viewed };
    this.detections.length = 0;
  }

  /**
   * Records a detection. `predicted` is where KCF had the face in this frame: KCF lags behind a
   * face that speeds up or grows (it keeps the size it was given), so the gap between its box and
   * the detection here is spread linearly back over the tracker-only frames since the previous
   * detection. The overlay and XML are written after that correction (analyse.ts delays frames).
   */
  addDetection(frame: number, detection: FaceDetection, predicted?: Box | null): void {
    this.mustBeRunning();
    if (predicted && this.detections.length > 0) this.correctDrift(frame, detection.box, predicted);
    if (this.list.length > 0) this.fillGap(frame, detection.box);
    this.detections.push({ ...detection, frame });
    if (this.firstDetectedFrame < 0) this.firstDetectedFrame = frame;
    this.list.push({ frame, box: detection.box, confidence: detection.score, detected: true });
    this.misses = 0;
    this.missedAt = null;
  }

  private mustBeRunning(): void {
    if (this.packed) throw new Error(`track ${this.number} has ended: its faces are packed and final`);
  }

  /** Records a detector run at `frame` that did not find the face. */
  addMiss(frame: number): void {
    if (this.misses++ === 0) this.missedAt = frame;
  }

  /** Renumbers a finished track's frames by `offset` (the analysis started at the input's frame `offset`). */
  shiftFrames(offset: number): void {
    this.packed?.shiftFrames(offset);
    for (const face of this.list) face.frame += offset;
    for (const detection of this.detections) detection.frame += offset;
    if (this.missedAt !== null) this.missedAt += offset;
    if (this.firstDetectedFrame >= 0) this.firstDetectedFrame += offset;
  }

  addTracked(frame: number, box: Box): void {
    this.mustBeRunning();
    const confidence = this.detections[this.detections.length - 1].score;
    this.list.push({ frame, box, confidence, detected: false });
  }

  /**
   * Records faces before the track's first one (its face followed backwards in time), oldest
   * first, ending on the frame before the first.
   */
  prependTracked(boxes: { frame: number; box: Box }[]): void {
    this.mustBeRunning();
    if (boxes.length === 0) return;
    if (boxes[boxes.length - 1].frame !== this.startFrame - 1) throw new Error('prepended faces must end right before the track');
    const confidence = this.detections[0].score;
    this.list.unshift(...boxes.map(({ frame, box }) => ({ frame, box, confidence, detected: false })));
  }

  private correctDrift(frame: number, detected: Box, predicted: Box): void {
    const from = this.lastDetectedFrame;
    const span = frame - from;
    if (span <= 1) return;
    const dx = detected.x - predicted.x;
    const dy = detected.y - predicted.y;
    const dw = detected.width - predicted.width;
    const dh = detected.height - predicted.height;
    for (let i = this.list.length - 1; i >= 0 && this.list[i].frame > from; i--) {
      const f = this.list[i];
      const t = (f.frame - from) / span;
      f.box = { x: f.box.x + dx * t, y: f.box.y + dy * t, width: f.box.width + dw * t, height: f.box.height + dh * t };
    }
  }

  /** Frames since the last record without a box (KCF lost the face) get one interpolated towards the detection. */
  private fillGap(frame: number, detected: Box): void {
    const last = this.list[this.list.length - 1];
    const span = frame - last.frame;
    for (let f = last.frame + 1; f < frame; f++) {
      const t = (f - last.frame) / span;
      const a = last.box;
      const box = { x: a.x + (detected.x - a.x) * t, y: a.y + (detected.y - a.y) * t, width: a.width + (detected.width - a.width) * t, height: a.height + (detected.height - a.height) * t };
      this.list.push({ frame: f, box, confidence: last.confidence, detected: false });
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
    while (this.list.length && this.list[this.list.length - 1].frame >= from && !this.list[this.list.length - 1].detected) this.list.pop();
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
    // The overlay asks every track of the job about every frame: most have ended long before.
    if (this.faceCount === 0 || frame < this.startFrame || frame > this.endFrame) return undefined;
    if (this.packed) {
      const i = this.packed.indexOf(frame);
      return i < 0 ? undefined : this.packed.at(i);
    }
    const i = indexOfFrame(this.list.length, (k) => this.list[k].frame, frame);
    return i < 0 ? undefined : this.list[i];
  }
}
