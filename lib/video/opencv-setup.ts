// What must happen before the OpenCV binding is loaded; opencv.ts imports this first.
import { Log } from '@u4/opencv-build';

// The binding's loader otherwise prints its configuration to stdout on every start.
Log.silence = true;
// The loader looks for a prebuilt OpenCV unless told not to; it reads that from the environment
// or from the package.json of the current directory, so a service started from another folder
// would fail to load the binding without this line. The binding is built against Debian's OpenCV.
process.env.OPENCV4NODEJS_DISABLE_AUTOBUILD ??= '1';
// The binding's own Mat allocator reports every allocation and release to V8 as external memory.
// A 1080p face log allocates several MB of Mats per frame, and V8 answers the reported growth
// with full garbage collections: 13% of the worker's time on the 1080p bench videos (29.3 fps
// without the reports against 25.7 with them, at the same peak memory: the big per-frame Mats are
// released explicitly, see yuv-frame.ts). It also makes OpenCV abort when it allocates inside its
// own threads (see opencv.ts).
process.env.OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING ??= '1';
