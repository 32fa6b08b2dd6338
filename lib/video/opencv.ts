// The OpenCV binding, set up for use in a worker process. Import cv from here, not from the package.
//
// One OpenCV thread per process: the binding's Mat allocator reports every allocation to V8, and
// when OpenCV allocates inside its own worker threads (warpAffine/remap, resize on large images)
// that call comes from a foreign thread and V8 aborts ("Check failed: marking_done_"), measured
// with @u4/opencv4nodejs 7.1 on Debian OpenCV 4.6. The appliance runs one worker process per core,
// so single-threaded OpenCV costs no throughput.
//
// The binding's loader also prints its configuration to stdout on every start; quiet-opencv
// silences it and must be evaluated before the binding is imported.
import './quiet-opencv.js';
import cv from '@u4/opencv4nodejs';

cv.setNumThreads(1);

export default cv;
