// Drawing of the tracks onto the overlay video's frames: each track's box and number, in a colour
// of its own, on every frame where the XML has a record of it.
import cv from '../../video/opencv.js';
import type { Box } from '../types.js';
import { round } from '../geometry.js';

/** Distinct colours (BGR), cycled by track number. */
const PALETTE: [number, number, number][] = [
  [0, 200, 255], [255, 120, 0], [0, 220, 0], [220, 0, 220], [0, 80, 255],
  [255, 255, 0], [120, 0, 255], [0, 255, 160], [255, 0, 90], [80, 180, 255],
];

export interface OverlayFace {
  track: number;
  box: Box;
}

export function drawTracks(frame: cv.Mat, faces: OverlayFace[]): void {
  // Line width and text size follow the frame size so numbers stay readable at 1080p and 240p.
  const thickness = Math.max(1, Math.round(frame.rows / 360));
  const fontScale = Math.max(0.4, frame.rows / 720);
  for (const { track, box } of faces) {
    const [b, g, r] = PALETTE[(track - 1) % PALETTE.length];
    const colour = new cv.Vec3(b, g, r);
    const rb = round(box);
    frame.drawRectangle(new cv.Point2(rb.x, rb.y), new cv.Point2(rb.x + rb.width, rb.y + rb.height), colour, thickness);
    const label = String(track);
    const textY = rb.y - 4 * thickness > 12 * fontScale ? rb.y - 4 * thickness : rb.y + rb.height + Math.round(18 * fontScale);
    frame.putText(label, new cv.Point2(rb.x, textY), cv.FONT_HERSHEY_SIMPLEX, fontScale, colour, thickness + 1);
  }
}
