// JPEG thumbnails of faces: the best crop of a sighting (or track), with a margin, scaled so the
// face is at least THUMBNAIL_MIN_HEIGHT tall for a VMS operator to look at. A dark crop is lifted
// as the models' inputs are (low-light.ts): at a third of the day's light the face is a dark grey
// shape to the eye as well (mean grey 33-42 on the night set's `dark` videos, 120-121 lifted). The
// camera's noise stays: smoothing it (bilateral, non-local means) softened the features too. The
// overlay video stays as the camera saw it.
import fs from 'node:fs/promises';
import path from 'node:path';
import cv from '../../video/opencv.js';
import { isDarkFace, liftDark } from '../low-light.js';

/** Small faces are enlarged to this height so a 30 px face is still recognisable on screen. */
const THUMBNAIL_MIN_HEIGHT = 160;
const JPEG_QUALITY = 90;

/**
 * Writes `crop` as a JPEG thumbnail. The caller hands `crop` over: it is released here with any
 * resized copy, since the binding does not tell V8 how large a Mat is and nothing else would
 * prompt their collection soon (opencv-setup.ts).
 */
export async function writeThumbnail(dir: string, file: string, crop: cv.Mat): Promise<void> {
  const lifted = isDarkFace(crop) ? liftDark(crop) : crop;
  let image = lifted;
  if (lifted.rows < THUMBNAIL_MIN_HEIGHT) {
    const factor = THUMBNAIL_MIN_HEIGHT / lifted.rows;
    image = lifted.resize(THUMBNAIL_MIN_HEIGHT, Math.round(lifted.cols * factor), 0, 0, cv.INTER_CUBIC);
  }
  const jpeg = cv.imencode('.jpg', image, [cv.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]);
  if (image !== lifted) image.release();
  if (lifted !== crop) lifted.release();
  crop.release();
  await fs.writeFile(path.join(dir, file), jpeg);
}
