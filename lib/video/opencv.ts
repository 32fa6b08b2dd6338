// The OpenCV binding, set up for use in a worker process. Import cv from here, not from the package.
//
// One OpenCV thread per process: the appliance runs one worker process per core, so
// single-threaded OpenCV costs no throughput (the face nets' forward passes alone take two, see
// blazeface-opencv.ts). With the binding's external memory tracking, which opencv-setup.ts turns
// off, OpenCV allocating inside its own worker threads (warpAffine/remap, resize on large images)
// also makes V8 abort ("Check failed: marking_done_"; @u4/opencv4nodejs 7.1, Debian OpenCV 4.6).
//
// opencv-setup.ts sets the binding's options (no stdout chatter, no external memory tracking) and
// must be evaluated before the binding is imported.
import './opencv-setup.js';
import cv from '@u4/opencv4nodejs';

cv.setNumThreads(1);

/**
 * `fn` run with `threads` OpenCV threads, then back to the process's one: for a network's forward
 * pass, which two threads speed up by 1.3-1.6x. Safe even with the binding's memory tracking on,
 * where Mats allocated inside OpenCV's threads make V8 abort: a forward pass writes into the blobs
 * its first run allocated.
 */
export function withThreads<T>(threads: number, fn: () => T): T {
  if (threads <= 1) return fn();
  cv.setNumThreads(threads);
  try {
    return fn();
  } finally {
    cv.setNumThreads(1);
  }
}

/**
 * What `read` makes of `m`, with m's memory freed as soon as it is read: for a temporary picture
 * whose numbers are all that is wanted. The binding's memory tracking is off (above), so V8 does
 * not know a Mat's size and collects it late; until then every new picture of that size lands on
 * memory the process has not touched lately, and the page faults and cache misses cost more than
 * the operation (a float abs of a 320x240 picture with glibc's default settings: 280 us, 19 us when
 * the one before was freed).
 */
export function readAndFree<T>(m: cv.Mat, read: (m: cv.Mat) => T): T {
  try {
    return read(m);
  } finally {
    m.release();
  }
}

/**
 * `fn`, given `made` to mark the Mats it makes for a moment: all of them are freed when it returns
 * or throws (readAndFree says why). Marking a Mat twice is harmless.
 */
export function withTemporaries<T>(fn: (made: (m: cv.Mat) => cv.Mat) => T): T {
  const temporaries: cv.Mat[] = [];
  try {
    return fn((m) => {
      temporaries.push(m);
      return m;
    });
  } finally {
    for (const m of temporaries) m.release();
  }
}

export default cv;
