// Drawing of the tracks onto the overlay video's frames: each track's box and number, in a colour
// of its own, on every frame where the XML has a record of it. Frames are I420 (see
// video/yuv-frame.ts) and are drawn into in place: boxes are runs of bytes in each plane, numbers
// are glyph masks rendered once by OpenCV's Hershey font.
import cv from '../../video/opencv.js';
import type { YuvFrame } from '../../video/yuv-frame.js';
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

/** A colour as BT.601 limited-range Y, U, V, as the video stores it. */
interface Yuv {
  y: number;
  u: number;
  v: number;
}

function toYuv([b, g, r]: [number, number, number]): Yuv {
  return {
    y: Math.round(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255),
    u: Math.round(128 + (-37.797 * r - 74.203 * g + 112 * b) / 255),
    v: Math.round(128 + (112 * r - 93.786 * g - 18.214 * b) / 255),
  };
}

const COLOURS = PALETTE.map(toYuv);

/** A track number drawn once: which pixels of its box are ink. */
interface Glyphs {
  width: number;
  height: number;
  ink: Uint8Array;
}

/**
 * Labels drawn lately. Only the tracks in view need theirs, a handful at a time, while a long
 * video numbers thousands: a 4-digit label at 1080p is 7.6 KB, so the cache starts over when full.
 */
const GLYPHS_KEPT = 100;
const glyphCache = new Map<string, Glyphs>();

function glyphs(label: string, fontScale: number, thickness: number): Glyphs {
  const key = `${label}/${fontScale}/${thickness}`;
  let g = glyphCache.get(key);
  if (!g) {
    const { size, baseLine } = cv.getTextSize(label, cv.FONT_HERSHEY_SIMPLEX, fontScale, thickness);
    const pad = thickness;
    const width = size.width + 2 * pad;
    const height = size.height + baseLine + 2 * pad;
    const mat = new cv.Mat(height, width, cv.CV_8UC1, 0);
    mat.putText(label, new cv.Point2(pad, pad + size.height), cv.FONT_HERSHEY_SIMPLEX, fontScale, new cv.Vec3(255, 255, 255), thickness);
    g = { width, height, ink: new Uint8Array(mat.getData()) };
    if (glyphCache.size >= GLYPHS_KEPT) glyphCache.clear();
    glyphCache.set(key, g);
  }
  return g;
}

export function drawTracks(frame: YuvFrame, faces: OverlayFace[]): void {
  // Line width and text size follow the frame size so numbers stay readable at 1080p and 240p.
  const thickness = Math.max(2, 2 * Math.round(frame.height / 720));
  const fontScale = Math.max(0.4, frame.height / 720);
  const planes = new Planes(frame);
  for (const { track, box } of faces) {
    const colour = COLOURS[(track - 1) % COLOURS.length];
    const rb = round(box);
    const x0 = rb.x;
    const y0 = rb.y;
    const x1 = rb.x + rb.width;
    const y1 = rb.y + rb.height;
    planes.fill(x0, y0, x1, y0 + thickness, colour);
    planes.fill(x0, y1 - thickness, x1, y1, colour);
    planes.fill(x0, y0, x0 + thickness, y1, colour);
    planes.fill(x1 - thickness, y0, x1, y1, colour);
    const g = glyphs(String(track), fontScale, thickness);
    // Above the box, or below it when there is no room.
    const top = y0 - 2 * thickness - g.height >= 0 ? y0 - 2 * thickness - g.height : y1 + thickness;
    planes.stamp(g, x0 - thickness, top, colour);
  }
}

/** The three planes of an I420 frame, written in place. */
class Planes {
  private readonly w: number;
  private readonly h: number;
  private readonly data: Buffer;
  private readonly uOffset: number;
  private readonly vOffset: number;

  constructor(frame: YuvFrame) {
    this.w = frame.width;
    this.h = frame.height;
    this.data = frame.data;
    this.uOffset = this.w * this.h;
    this.vOffset = this.uOffset + (this.w * this.h) / 4;
  }

  /** Fills [x0, x1) x [y0, y1), clipped to the frame; chroma on the 2x2 blocks it touches. */
  fill(x0: number, y0: number, x1: number, y1: number, c: Yuv): void {
    x0 = Math.max(0, x0);
    y0 = Math.max(0, y0);
    x1 = Math.min(this.w, x1);
    y1 = Math.min(this.h, y1);
    if (x1 <= x0 || y1 <= y0) return;
    for (let y = y0; y < y1; y++) this.data.fill(c.y, y * this.w + x0, y * this.w + x1);
    const cw = this.w / 2;
    const cx0 = x0 >> 1;
    const cx1 = (x1 + 1) >> 1;
    for (let y = y0 >> 1; y < (y1 + 1) >> 1; y++) {
      this.data.fill(c.u, this.uOffset + y * cw + cx0, this.uOffset + y * cw + cx1);
      this.data.fill(c.v, this.vOffset + y * cw + cx0, this.vOffset + y * cw + cx1);
    }
  }

  /** Paints the ink of `g` with its top-left corner at x, y. */
  stamp(g: Glyphs, x: number, y: number, c: Yuv): void {
    const cw = this.w / 2;
    for (let gy = 0; gy < g.height; gy++) {
      const fy = y + gy;
      if (fy < 0 || fy >= this.h) continue;
      for (let gx = 0; gx < g.width; gx++) {
        const fx = x + gx;
        if (fx < 0 || fx >= this.w || g.ink[gy * g.width + gx] < 128) continue;
        this.data[fy * this.w + fx] = c.y;
        const ci = (fy >> 1) * cw + (fx >> 1);
        this.data[this.uOffset + ci] = c.u;
        this.data[this.vOffset + ci] = c.v;
      }
    }
  }
}
