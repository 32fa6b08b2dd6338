// A camera's slot renewed from a clip through which a car's light lingered: the renewal's median
// kept the pool of light the car threw on the ground (docs/benchmarks.md, renewed references).
// Tests of the second opinion (lib/cameras/check-setup.ts) store one as the appliance would.
import type { RunningService } from '../lib/service.js';
import cv from '../lib/video/opencv.js';
import { readImage } from '../lib/video/decode.js';
import { newReferenceFile } from '../lib/cameras/reference-files.js';
import { writeCameraPicture } from '../lib/kamcheck/refresh.js';
import { minuteOfDay, slotOf } from '../lib/cameras/time-of-day.js';

/** `picture` with the pool of light a car's headlights throw on the ground in front of the camera. */
export function withPoolOfLight(picture: cv.Mat): cv.Mat {
  const [w, h] = [picture.cols, picture.rows];
  const pool = new cv.Mat(h, w, cv.CV_8UC1, 0);
  pool.drawEllipse(new cv.RotatedRect(new cv.Point2(w * 0.5, h * 0.72), new cv.Size(w * 0.6, h * 0.3), 0), new cv.Vec3(255, 255, 255), -1);
  const light = pool.gaussianBlur(new cv.Size(0, 0), w / 30, w / 30, cv.BORDER_REPLICATE).convertTo(cv.CV_32F, 120 / 255);
  return picture.convertTo(cv.CV_32FC3).add(new cv.Mat([light, light, light])).convertTo(cv.CV_8UC3);
}

/**
 * Stores `scene` with a pool of light as the camera's reference renewed from a clip captured at
 * `capturedAt` (its slot by the process's TZ, slots of `slotMinutes`). Returns the reference's id.
 */
export async function addLitRenewal(service: RunningService, dataDir: string, camera: string, scene: string, capturedAt: string, slotMinutes = 60): Promise<string> {
  const picture = withPoolOfLight(readImage(scene));
  const file = newReferenceFile(dataDir, 'jpg');
  writeCameraPicture(file.absolute, picture);
  const at = Date.parse(capturedAt);
  await service.cameras.addReference({
    ...{ id: file.id, camera, slot: slotOf(at, slotMinutes), capturedAt: at, minuteOfDay: minuteOfDay(at), sourceJob: crypto.randomUUID() },
    ...{ file: file.file, width: picture.cols, height: picture.rows, createdAt: Date.now(), origin: 'renewed' },
  });
  return file.id;
}
