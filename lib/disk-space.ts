// Free space in DATA_DIR, and the floor that keeps the appliance from filling its disk: uploads
// that would take it below MIN_FREE_DISK_MB are refused (507) before and after their body is
// read. The probe is injectable so tests can simulate a full disk without filling one.
import fs from 'node:fs/promises';

/** Bytes an unprivileged process may still write on the file system that holds `dir`. */
export type DiskSpaceProbe = (dir: string) => Promise<number>;

export const statfsFreeBytes: DiskSpaceProbe = async (dir) => {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
};

/** Accepting more data would leave less than the configured floor free. */
export class InsufficientStorageError extends Error {
  readonly code = 'insufficient_storage';
  constructor(
    readonly freeBytes: number,
    readonly minFreeBytes: number,
    readonly incomingBytes: number,
  ) {
    super(`${freeBytes} bytes free, ${minFreeBytes} must stay free, ${incomingBytes} incoming`);
    this.name = 'InsufficientStorageError';
  }
}

export class StorageGuard {
  constructor(
    private readonly dir: string,
    readonly minFreeBytes: number,
    private readonly probe: DiskSpaceProbe = statfsFreeBytes,
  ) {}

  freeBytes(): Promise<number> {
    return this.probe(this.dir);
  }

  /** Throws InsufficientStorageError unless `incomingBytes` more would leave the floor free. */
  async assertRoomFor(incomingBytes = 0): Promise<void> {
    const free = await this.freeBytes();
    if (free - incomingBytes < this.minFreeBytes) throw new InsufficientStorageError(free, this.minFreeBytes, incomingBytes);
  }
}
