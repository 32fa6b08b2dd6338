// Free space in DATA_DIR, and the floors that keep the appliance from filling its disk:
// - uploads that would take it below MIN_FREE_DISK_MB are refused (507) before and after their
//   body is read; that floor is the room left for the results of the jobs already accepted;
// - running jobs that write result files are stopped, failed with `insufficient_storage`, when
//   free space falls below a quarter of it (the job queue checks every second, and before a job
//   starts): something is filling the disk faster than results should, and the last quarter is
//   kept for the database, its WAL and the system;
// - a write that fails with ENOSPC anyway (the floor is 0, or the disk filled within a second)
//   fails its job the same way (`diskFullError`).
// The probe is injectable so tests can simulate a full disk without filling one.
import fs from 'node:fs/promises';
import { formatBytes, wholeMib } from './bytes.js';
import { DiskFullError, ServiceError } from './errors.js';

/** Bytes an unprivileged process may still write on the file system that holds `dir`. */
export type DiskSpaceProbe = (dir: string) => Promise<number>;

export const statfsFreeBytes: DiskSpaceProbe = async (dir) => {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
};

/** Running jobs stop below MIN_FREE_DISK_MB divided by this (256 MiB of the default 1 GiB). */
export const RUNNING_JOB_FLOOR_DIVISOR = 4;

/**
 * How long /healthz keeps reporting a job that ran out of disk space (unless a job has written
 * its results since): the partial results are removed at once, so free space looks fine again
 * right after, and a monitor polling every few minutes must still see that the disk was full.
 */
export const OUT_OF_SPACE_REPORT_MS = 10 * 60 * 1000;

/** Accepting more data would leave less than the configured floor free (507; uploads are refused). */
export class InsufficientStorageError extends ServiceError {
  constructor(
    readonly freeBytes: number,
    readonly minFreeBytes: number,
    readonly incomingBytes: number,
  ) {
    super(
      'insufficient_storage',
      incomingBytes > 0 && freeBytes >= minFreeBytes
        ? `not enough free disk space for an upload of ${formatBytes(incomingBytes)}: ${formatBytes(freeBytes)} free, of which ${formatBytes(minFreeBytes)} must stay free; retry when old results have been removed`
        : `the appliance's disk is nearly full (${formatBytes(freeBytes)} free, ${formatBytes(minFreeBytes)} must stay free); uploads are refused until space is freed`,
      { status: 507, expose: true },
    );
  }
}

/** A job that ran out of disk space, for /healthz. */
export interface OutOfSpaceEvent {
  jobId: string;
  at: number;
}

export class StorageGuard {
  /** The last job that ran out of disk space, until a job writes its results again. */
  private outOfSpace: OutOfSpaceEvent | null = null;

  constructor(
    private readonly dir: string,
    readonly minFreeBytes: number,
    private readonly probe: DiskSpaceProbe = statfsFreeBytes,
  ) {}

  /** Below this, running jobs that write result files are stopped (0 when MIN_FREE_DISK_MB is 0). */
  get runningJobFloorBytes(): number {
    return Math.floor(this.minFreeBytes / RUNNING_JOB_FLOOR_DIVISOR);
  }

  freeBytes(): Promise<number> {
    return this.probe(this.dir);
  }

  /** Throws InsufficientStorageError unless `incomingBytes` more would leave the floor free. */
  async assertRoomFor(incomingBytes = 0): Promise<void> {
    const free = await this.freeBytes();
    if (free - incomingBytes < this.minFreeBytes) throw new InsufficientStorageError(free, this.minFreeBytes, incomingBytes);
  }

  /**
   * A DiskFullError when free space is below the running-job floor, else null: checked before a
   * job that writes results starts, and every second while it runs.
   */
  async runningJobCheck(): Promise<DiskFullError | null> {
    const floor = this.runningJobFloorBytes;
    if (floor === 0) return null;
    const free = await this.freeBytes();
    if (free >= floor) return null;
    return new DiskFullError(
      `the disk of the appliance is nearly full (${wholeMib(free)} MiB free, ${wholeMib(floor)} MiB are kept free while jobs run); ` +
        'the job was stopped and its partial results removed. Submit it again when space has been freed',
    );
  }

  /** A job failed with a DiskFullError. */
  recordOutOfSpace(jobId: string, at = Date.now()): void {
    this.outOfSpace = { jobId, at };
  }

  /** A job wrote its results: the disk holds results again. */
  recordResultsWritten(): void {
    this.outOfSpace = null;
  }

  /** The job that ran out of space within OUT_OF_SPACE_REPORT_MS, if no job has written results since. */
  recentOutOfSpace(now = Date.now()): OutOfSpaceEvent | null {
    if (this.outOfSpace && now - this.outOfSpace.at > OUT_OF_SPACE_REPORT_MS) this.outOfSpace = null;
    return this.outOfSpace;
  }
}

/**
 * The DiskFullError that explains `err`, or null: the error (or its cause) is one already, or a
 * write failed with ENOSPC (files) or SQLITE_FULL (the database). ffmpeg's own report of a
 * full disk is read where its stderr is (the video encoder throws a DiskFullError).
 */
export function diskFullError(err: unknown): DiskFullError | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof DiskFullError) return e;
    if (e.code === 'ENOSPC' || e.code === 'SQLITE_FULL') return DiskFullError.writeFailed(err);
  }
  return null;
}
