// Decoding of uploaded media into OpenCV Mats. Runs only in worker processes (never on the
// HTTP event loop): importing this module loads the native OpenCV binding.
import cv from './opencv.js';
import { DecodeError } from './errors.js';

export interface DecodedClip {
  frames: cv.Mat[];
  width: number;
  height: number;
  fps: number;
}

/**
 * Reads up to `maxFrames` frames (0 = all) of a video file, in BGR.
 * Throws DecodeError when the file yields no frame at all.
 */
export function readVideoFrames(path: string, maxFrames = 0): DecodedClip {
  const cap = openVideo(path);
  try {
    const fps = cap.get(cv.CAP_PROP_FPS) || 0;
    const frames: cv.Mat[] = [];
    for (;;) {
      if (maxFrames > 0 && frames.length >= maxFrames) break;
      const frame = cap.read();
      if (!frame || frame.empty) break;
      frames.push(frame);
    }
    if (frames.length === 0) throw new DecodeError('the video has no decodable frame (corrupt or unsupported file)');
    return { frames, width: frames[0].cols, height: frames[0].rows, fps };
  } finally {
    cap.release();
  }
}

/** Opens a video for frame-by-frame reading; the caller releases it. */
export function openVideo(path: string): cv.VideoCapture {
  let cap: cv.VideoCapture;
  try {
    cap = new cv.VideoCapture(path);
  } catch (err) {
    throw new DecodeError(`the video cannot be opened: ${(err as Error).message}`);
  }
  return cap;
}

/** Reads a still image (JPEG, PNG, ...) in BGR. */
export function readImage(path: string): cv.Mat {
  let img: cv.Mat;
  try {
    img = cv.imread(path, cv.IMREAD_COLOR);
  } catch (err) {
    throw new DecodeError('the image cannot be decoded (corrupt or unsupported file)');
  }
  if (!img || img.empty) throw new DecodeError('the image cannot be decoded (corrupt or unsupported file)');
  return img;
}
