// Debian's opencv-doc sample data: the real footage and photos that test media, fixtures and
// benchmarks are cut from (vtest.avi: a static camera over a walkway with pedestrians).
import path from 'node:path';

export const OPENCV_DATA_DIR = '/usr/share/doc/opencv-doc/examples/data';
export const VTEST_AVI = path.join(OPENCV_DATA_DIR, 'vtest.avi');
