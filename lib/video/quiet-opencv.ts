// Import first in any process that loads OpenCV: the binding's loader otherwise prints its
// configuration to stdout on every start.
import { Log } from '@u4/opencv-build';

Log.silence = true;
