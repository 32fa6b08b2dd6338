// Box arithmetic shared by the face log's stages.
import type { Box, Point } from './types.js';

export function area(b: Box): number {
  return Math.max(0, b.width) * Math.max(0, b.height);
}

export function intersection(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Intersection over union, 0..1. */
export function iou(a: Box, b: Box): number {
  const inter = intersection(a, b);
  return inter === 0 ? 0 : inter / (area(a) + area(b) - inter);
}

export function centre(b: Box): Point {
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/** The box grown by `margin` times its size on every side, clipped to width x height. */
export function expand(b: Box, margin: number, width: number, height: number): Box {
  return clip({ x: b.x - b.width * margin, y: b.y - b.height * margin, width: b.width * (1 + 2 * margin), height: b.height * (1 + 2 * margin) }, width, height);
}

export function clip(b: Box, width: number, height: number): Box {
  const x = Math.max(0, Math.min(width, b.x));
  const y = Math.max(0, Math.min(height, b.y));
  const x2 = Math.max(0, Math.min(width, b.x + b.width));
  const y2 = Math.max(0, Math.min(height, b.y + b.height));
  return { x, y, width: x2 - x, height: y2 - y };
}

/** Integer pixel box, for OpenCV Rects and output files. */
export function round(b: Box): Box {
  const x = Math.round(b.x);
  const y = Math.round(b.y);
  return { x, y, width: Math.round(b.x + b.width) - x, height: Math.round(b.y + b.height) - y };
}

export function scale(b: Box, factor: number): Box {
  return { x: b.x * factor, y: b.y * factor, width: b.width * factor, height: b.height * factor };
}
