// The face records of a job's ended tracks, in a file of the run's own folder. A face log keeps
// every face record to its end (the XML lists them all; stitching and the overlay read some),
// and a long video has hundreds of thousands: 179038 in 2 hours of the 1080p bench video. Each
// track's records are appended as it ends, and read back a record at a time when asked for.
import fs from 'node:fs';

export class FaceSpill {
  private readonly fd: number;
  private size = 0;
  /** Where read() puts a record: callers decode it before the next read. */
  private readonly scratch = Buffer.alloc(64);

  /** Creates `file` (replacing any), for this spill alone. */
  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'w+');
  }

  /** Appends `bytes` and answers where they start. A full disk throws ENOSPC. */
  append(bytes: Uint8Array): number {
    const at = this.size;
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(this.fd, bytes, done, bytes.length - done, at + done);
    this.size += bytes.length;
    return at;
  }

  /** The `length` bytes at `position` (at most 64), valid until the next read. */
  read(position: number, length: number): Buffer {
    if (length > this.scratch.length || position + length > this.size) throw new RangeError(`no record of ${length} bytes at ${position} in ${this.file}`);
    let done = 0;
    while (done < length) {
      const n = fs.readSync(this.fd, this.scratch, done, length - done, position + done);
      if (n === 0) throw new Error(`${this.file} ended at ${position + done}`);
      done += n;
    }
    return this.scratch;
  }

  get bytes(): number {
    return this.size;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}
