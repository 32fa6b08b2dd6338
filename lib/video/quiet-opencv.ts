// Import first in any process that loads OpenCV: the binding's loader otherwise prints its
// configuration to stdout on every start.
import { Log } from '@u4/opencv-build';

Log.silence = true;
// The loader looks for a prebuilt OpenCV unless told not to; it reads that from the environment
// or from the package.json of the current directory, so a service started from another folder
// would fail to load the binding without this line. The binding is built against Debian's OpenCV.
process.env.OPENCV4NODEJS_DISABLE_AUTOBUILD ??= '1';
