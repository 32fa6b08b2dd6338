// Hands the free memory inside glibc's heaps back to the kernel (malloc_trim, through the addon
// native/malloc-trim.cc that `make` builds into build/native/). glibc keeps what a job frees
// inside its heaps, resident, and a worker's next jobs do not always reuse it: over 200 still face
// logs in a row a worker went 391 -> 445 MiB, and in such a batch gdb's malloc_info found 65 of the
// main heap's 146 MiB free, and 53 of a thread arena's 70. With the free pages handed back the
// batch held flat (docs/benchmarks.md, Bursts of short jobs).
import { createRequire } from 'node:module';

const ADDON = '../../native/malloc-trim.node';

let trim: (() => boolean) | null = null;

/** Returns the free pages; true when there were any. Throws when the addon is not built. */
export function releaseFreeMemory(): boolean {
  if (!trim) {
    try {
      trim = (createRequire(import.meta.url)(ADDON) as { trim: () => boolean }).trim;
    } catch (err) {
      throw new Error(`the malloc_trim addon is missing (run make): ${(err as Error).message}`);
    }
  }
  return trim();
}
