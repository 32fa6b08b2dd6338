// Run as a child process by test/76 (`node --expose-gc free-memory-probe.js`, with the workers'
// glibc settings): fills glibc's heap with 256 KiB blocks, frees all but every 16th (the kept ones
// pin the heap, as a job's long-lived allocations do), collects, then hands the free memory back
// (lib/jobs/free-memory.ts). Prints one JSON line: the resident memory at each step, in MiB.
import { releaseFreeMemory } from '../../lib/jobs/free-memory.js';

const BLOCK = 256 * 1024;
const BLOCKS = 1024; // 256 MiB
const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc!;
const rss = () => Math.round(process.memoryUsage.rss() / MiB);

const start = rss();
let blocks: (Buffer | null)[] = Array.from({ length: BLOCKS }, () => Buffer.alloc(BLOCK, 1));
const filled = rss();
blocks = blocks.map((b, i) => (i % 16 === 0 ? b : null));
gc();
const freed = rss();
const released = releaseFreeMemory();
const after = rss();
console.log(JSON.stringify({ start, filled, freed, released, after, kept: blocks.filter(Boolean).length }));
process.exit(0);
