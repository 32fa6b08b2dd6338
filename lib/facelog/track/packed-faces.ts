// An ended track's face records, packed into typed arrays. A face log keeps every face record of
// its video until the end (the XML lists them all, the sightings and the stitching read them),
// about one per frame per person in view: a 2-hour video has hundreds of thousands. As objects (a
// record and its box) the 14314 faces of a 10-minute 720p face log held 4.3 MiB of V8's heap
// after a collection; with the tracks packed, 0.7 MiB, and 0.6 MB of arrays (45 bytes a face:
// the same numbers exactly, so the XML prints what it printed before).
import type { TrackFace } from './track.js';

export class PackedFaces {
  private readonly frames: Int32Array;
  /** x, y, width, height of each face in turn. */
  private readonly boxes: Float64Array;
  private readonly confidences: Float64Array;
  private readonly detected: Uint8Array;

  constructor(faces: readonly TrackFace[]) {
    const n = faces.length;
    this.frames = new Int32Array(n);
    this.boxes = new Float64Array(4 * n);
    this.confidences = new Float64Array(n);
    this.detected = new Uint8Array(n);
    faces.forEach((f, i) => {
      this.frames[i] = f.frame;
      this.boxes.set([f.box.x, f.box.y, f.box.width, f.box.height], 4 * i);
      this.confidences[i] = f.confidence;
      this.detected[i] = f.detected ? 1 : 0;
    });
  }

  get length(): number {
    return this.frames.length;
  }

  frameAt(i: number): number {
    return this.frames[i];
  }

  /** The record at `i`, as a new object. */
  at(i: number): TrackFace {
    const b = 4 * i;
    return {
      frame: this.frames[i],
      box: { x: this.boxes[b], y: this.boxes[b + 1], width: this.boxes[b + 2], height: this.boxes[b + 3] },
      confidence: this.confidences[i],
      detected: this.detected[i] === 1,
    };
  }

  /** Every record, as new objects (for the job's outputs, one track at a time). */
  all(): TrackFace[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }

  shiftFrames(offset: number): void {
    for (let i = 0; i < this.frames.length; i++) this.frames[i] += offset;
  }
}
