// Sizes in bytes as people read them, in messages and health reports.

const MIB = 1024 * 1024;

/** `1.5 MiB` from 1 MiB up (one decimal, none when it is .0), `512 bytes` below. */
export function formatBytes(bytes: number): string {
  const mib = bytes / MIB;
  return mib >= 1 ? `${+mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

/** Whole MiB, rounded down: a free-space figure never claims more than there is. */
export function wholeMib(bytes: number): number {
  return Math.floor(bytes / MIB);
}
