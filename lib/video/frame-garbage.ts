// The garbage a frame loop leaves, collected as the loop goes. Each frame's analysis makes Mats
// it does not release itself (regions, resized windows, blobs, conversions): small next to the
// frame, but the binding does not tell V8 their size (opencv-setup.ts), so V8 collects them only
// when its own heap asks, hundreds of frames later. Meanwhile their native memory piles up, and
// glibc's heap keeps the high-water mark of that pile: the worker's resident memory climbed all
// through a face log, most of the heap's growth being free space glibc kept.
//
// A young-generation collection after every frame frees the Mats of the frame before (they die
// young); the few that live long enough to be promoted (a track's window, a frame waiting for the
// overlay) wait for a full collection every FULL_COLLECTION_MS. Measured in-process on the 720p
// bench video (docs/benchmarks.md, Long videos): 10 minutes climbed to 582 MiB with the young
// collections alone (107.4 s) and stayed at 434-475 MiB with both (114.7 s, one run each);
// collecting everything every 5 frames was flatter still but took 40% longer.

/** Time between two full collections in a frame loop. */
export const FULL_COLLECTION_MS = 2000;

type Gc = (options?: { type?: 'minor' | 'major' }) => void;

let lastFull = 0;

/**
 * Collects the garbage of the frames before: a young-generation collection, and a full one when
 * the last is FULL_COLLECTION_MS old. Does nothing in a process started without --expose-gc (the
 * workers have it; a test process need not).
 */
export function collectFrameGarbage(now = Date.now()): void {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) return;
  if (now - lastFull >= FULL_COLLECTION_MS) {
    lastFull = now;
    gc();
  } else {
    gc({ type: 'minor' });
  }
}
