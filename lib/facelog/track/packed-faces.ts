// An ended track's face records, packed. A face log keeps every face record of its video until the
// end (the XML lists them all, the sightings and the stitching read them), about one per frame per
// person in view: a 2-hour video has hundreds of thousands. As objects (a record and its box) the
// 14314 faces of a 10-minute 720p face log held 4.3 MiB of V8's heap after a collection. Packed,
// a face keeps its frame number in memory (4 bytes, for finding and ordering records) and the rest
// of its record (41 bytes: the same numbers exactly, so the XML prints what it printed before) in
// the job's spill file (face-spill.ts), or in memory where there is none.
import type { TrackFace } from './track.js';
import type { FaceSpill } from './face-spill.js';

/** x, y, width, height and confidence (float64), then detected (uint8). */
const RECORD_BYTES = 41;

export class PackedFaces {
  private readonly frames: Int32Array;
  /** The records, when they are not spilled. */
  private readonly records: Buffer | null;
  /** Where the records start in the spill. */
  private readonly offset: number;

  constructor(
    faces: readonly TrackFace[],
    private readonly spill: FaceSpill | null = null,
  ) {
    const n = faces.length;
    this.frames = new Int32Array(n);
    const records = Buffer.alloc(RECORD_BYTES * n);
    faces.forEach((f, i) => {
      this.frames[i] = f.frame;
      let o = RECORD_BYTES * i;
      for (const x of [f.box.x, f.box.y, f.box.width, f.box.height, f.confidence]) o = records.writeDoubleLE(x, o);
      records.writeUInt8(f.detected ? 1 : 0, o);
    });
    this.offset = spill ? spill.append(records) : 0;
    this.records = spill ? null : records;
  }

  get length(): number {
    return this.frames.length;
  }

  frameAt(i: number): number {
    return this.frames[i];
  }

  /** The record at `i`, as a new object. */
  at(i: number): TrackFace {
    if (!(i >= 0 && i < this.length)) throw new RangeError(`no face ${i} in a track of ${this.length}`);
    const [bytes, o] = this.records ? [this.records, RECORD_BYTES * i] : [this.spill!.read(this.offset + RECORD_BYTES * i, RECORD_BYTES), 0];
    return {
      frame: this.frames[i],
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
    for (let i = 0; i < this.frames.length; i++) this.frames[i] += offset;
  }
}
