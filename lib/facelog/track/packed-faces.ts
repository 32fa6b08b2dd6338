// An ended track's face records, packed. A face log keeps every face record of its video until the
// end (the XML lists them all, the sightings and the stitching read them), about one per frame per
// person in view: a 2-hour video has hundreds of thousands. As objects (a record and its box) the
// 14314 faces of a 10-minute 720p face log held 4.3 MiB of V8's heap after a collection. Packed,
// a track's records (41 bytes each: the same numbers exactly, so the XML prints what it printed
// before) go to the job's spill file (face-spill.ts), or stay in memory where there is none. What
// stays in memory either way is their frame numbers, for finding and ordering records: the first
// alone where they follow each other, one a frame, as the tracker makes them (it fills a gap in
// KCF's boxes when the face is found again, cuts only the tail, and prepends a run ending right
// before the first); 4 bytes a face otherwise.
import type { TrackFace } from './track.js';
import type { FaceSpill } from './face-spill.js';

/** x, y, width, height and confidence (float64), then detected (uint8). */
const RECORD_BYTES = 41;

export class PackedFaces {
  /** Each record's frame, or null where they run on from `first`, one a frame. */
  private readonly frames: Int32Array | null;
  private first: number;
  readonly length: number;
  /** The records, when they are not spilled. */
  private readonly records: Buffer | null;
  /** Where the records start in the spill. */
  private readonly offset: number;

  constructor(
    faces: readonly TrackFace[],
    private readonly spill: FaceSpill | null = null,
  ) {
    const n = faces.length;
    this.length = n;
    this.first = n ? faces[0].frame : 0;
    const consecutive = faces.every((f, i) => f.frame === this.first + i);
    this.frames = consecutive ? null : Int32Array.from(faces, (f) => f.frame);
    const records = Buffer.alloc(RECORD_BYTES * n);
    faces.forEach((f, i) => {
      let o = RECORD_BYTES * i;
      for (const x of [f.box.x, f.box.y, f.box.width, f.box.height, f.confidence]) o = records.writeDoubleLE(x, o);
      records.writeUInt8(f.detected ? 1 : 0, o);
    });
    this.offset = spill ? spill.append(records) : 0;
    this.records = spill ? null : records;
  }

  frameAt(i: number): number {
    return this.frames ? this.frames[i] : this.first + i;
  }

  /** The record at `i`, as a new object. */
  at(i: number): TrackFace {
    if (!(i >= 0 && i < this.length)) throw new RangeError(`no face ${i} in a track of ${this.length}`);
    const [bytes, o] = this.records ? [this.records, RECORD_BYTES * i] : [this.spill!.read(this.offset + RECORD_BYTES * i, RECORD_BYTES), 0];
    return {
      frame: this.frameAt(i),
      box: { x: bytes.readDoubleLE(o), y: bytes.readDoubleLE(o + 8), width: bytes.readDoubleLE(o + 16), height: bytes.readDoubleLE(o + 24) },
      confidence: bytes.readDoubleLE(o + 32),
      detected: bytes.readUInt8(o + 40) === 1,
    };
  }

  /** Every record, as new objects (for the job's outputs, one track at a time). */
  all(): TrackFace[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }

  shiftFrames(offset: number): void {
    this.first += offset;
    if (this.frames) for (let i = 0; i < this.frames.length; i++) this.frames[i] += offset;
  }

  /** The index of the record of `frame`, or -1. */
  indexOf(frame: number): number {
    if (!this.frames) return frame >= this.first && frame < this.first + this.length ? frame - this.first : -1;
    const frames = this.frames;
    return indexOfFrame(frames.length, (i) => frames[i], frame);
  }
}

/** The index of `frame` among `length` records in frame order, at most one a frame (binary search), or -1. */
export function indexOfFrame(length: number, frameAt: (i: number) => number, frame: number): number {
  let lo = 0;
  let hi = length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const f = frameAt(mid);
    if (f === frame) return mid;
    if (f < frame) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
