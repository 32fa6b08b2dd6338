// Drawing a frame: a person is a head sprite (perspective-warped for yaw, rotated for roll, scaled
// by distance) on a neck and a torso; a passer-by close to the camera is a dark silhouette. Every
// drawn shape is also a polygon, so the truth knows exactly which part of a face is hidden.
import cv from '../../lib/video/opencv.js';
import type { HeadSprite } from './faces.js';
import type { Pose } from './walk.js';

export type Point = [number, number];
export type Polygon = Point[];
export type Colour = [number, number, number];

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

type Matrix3 = number[][];

/**
 * Distance of the virtual camera from the face plane, in face widths: sets how strongly the near
 * side of a turned face grows against the far side (3: a face seen from ~0.5 m, fills 15 degrees).
 */
const YAW_VIEW_DISTANCE = 3;

const mul = (a: Matrix3, b: Matrix3): Matrix3 =>
  a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j]));
const translate = (x: number, y: number): Matrix3 => [[1, 0, x], [0, 1, y], [0, 0, 1]];

export function apply(m: Matrix3, [x, y]: Point): Point {
  const w = m[2][0] * x + m[2][1] * y + m[2][2];
  return [(m[0][0] * x + m[0][1] * y + m[0][2]) / w, (m[1][0] * x + m[1][1] * y + m[1][2]) / w];
}

/**
 * Sprite pixels (of a copy scaled by `level`) -> frame pixels: the face centre goes to the pose's
 * centre, the face width to the pose's width; yaw turns the sprite's plane about its vertical axis
 * through the face centre (seen in perspective), roll rotates it in the picture.
 */
export function headTransform(sprite: HeadSprite, pose: Pose, level = 1, withRoll = true): Matrix3 {
  const s = pose.faceWidth / (sprite.faceW * level);
  const yaw = (pose.yawDeg * Math.PI) / 180;
  const d = YAW_VIEW_DISTANCE * sprite.faceW * level;
  const turn: Matrix3 = [[Math.cos(yaw), 0, 0], [0, 1, 0], [-Math.sin(yaw) / d, 0, 1]];
  const r = withRoll ? (pose.rollDeg * Math.PI) / 180 : 0;
  const rotScale: Matrix3 = [[s * Math.cos(r), -s * Math.sin(r), 0], [s * Math.sin(r), s * Math.cos(r), 0], [0, 0, 1]];
  return mul(translate(pose.cx, pose.cy), mul(rotScale, mul(turn, translate(-sprite.faceCx * level, -sprite.faceCy * level))));
}

/** The face box of the truth: the face rectangle through the transform without roll, its bounds (not clipped). */
export function faceBox(sprite: HeadSprite, pose: Pose): Box {
  const m = headTransform(sprite, pose, 1, false);
  const { faceCx: cx, faceCy: cy, faceW: w, faceH: h } = sprite;
  const pts = [[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2], [cx - w / 2, cy + h / 2]].map((p) => apply(m, p as Point));
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

export function clipBox(b: Box, W: number, H: number): Box | undefined {
  const x0 = Math.max(0, b.x);
  const y0 = Math.max(0, b.y);
  const x1 = Math.min(W, b.x + b.width);
  const y1 = Math.min(H, b.y + b.height);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : undefined;
}

/** What a person is wearing: their face and their clothes. */
export interface PersonLook {
  sprite: HeadSprite;
  clothes: Colour;
}

/** A person's drawn outline in one frame, frame pixels. */
export interface PersonShapes {
  head: Polygon;
  neck: Polygon;
  torso: Polygon;
}

export function personShapes(look: PersonLook, pose: Pose): PersonShapes {
  const { sprite } = look;
  const m = headTransform(sprite, pose);
  const head = sprite.outline.map((p) => apply(m, p));
  const fw = pose.faceWidth;
  const fh = (fw * sprite.faceH) / sprite.faceW;
  const { cx, cy } = pose;
  const chin = cy + fh / 2;
  const neck: Polygon = [[cx - 0.26 * fw, cy + 0.2 * fh], [cx + 0.26 * fw, cy + 0.2 * fh], [cx + 0.3 * fw, chin + 0.4 * fh], [cx - 0.3 * fw, chin + 0.4 * fh]];
  const top = chin + 0.3 * fh; // shoulders start below the neck; shoulders 2.8 face widths, like a person's
  const torso: Polygon = [
    [cx - 0.55 * fw, top], [cx + 0.55 * fw, top], [cx + 1.2 * fw, top + 0.2 * fh], [cx + 1.4 * fw, top + 0.6 * fh],
    [cx + 1.3 * fw, top + 3.5 * fh], [cx - 1.3 * fw, top + 3.5 * fh], [cx - 1.4 * fw, top + 0.6 * fh], [cx - 1.2 * fw, top + 0.2 * fh],
  ];
  return { head, neck, torso };
}

const scaled = (c: Colour, gain: number): cv.Vec3 => new cv.Vec3(...(c.map((v) => Math.max(0, Math.min(255, v * gain))) as Colour));

function bounds(polys: Polygon[], W: number, H: number): cv.Rect | undefined {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const p of polys) for (const [x, y] of p) {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  const l = Math.max(0, Math.floor(x0));
  const t = Math.max(0, Math.floor(y0));
  const r = Math.min(W, Math.ceil(x1) + 1);
  const b = Math.min(H, Math.ceil(y1) + 1);
  return r > l && b > t ? new cv.Rect(l, t, r - l, b - t) : undefined;
}

const toPoints = (p: Polygon, dx = 0, dy = 0) => p.map(([x, y]) => new cv.Point2(Math.round(x - dx), Math.round(y - dy)));

/** Filled polygons, blended at `opacity` (a person fading in or out). */
export function fillPolygons(frame: cv.Mat, shapes: Array<{ poly: Polygon; colour: cv.Vec3 }>, opacity: number): void {
  if (opacity <= 0) return;
  const roi = bounds(shapes.map((s) => s.poly), frame.cols, frame.rows);
  if (!roi) return;
  const region = frame.getRegion(roi);
  const layer = region.copy();
  for (const s of shapes) layer.drawFillPoly([toPoints(s.poly, roi.x, roi.y)], s.colour, cv.LINE_AA);
  (opacity >= 0.999 ? layer : region.addWeighted(1 - opacity, layer, opacity, 0)).copyTo(region);
}

/** Copies of a sprite at 1/2, 1/4 ... (area-averaged) so that a far face is not drawn from a big crop by sparse sampling. */
const mipCache = new Map<string, { image: cv.Mat; alpha: cv.Mat }>();

function spriteLevel(sprite: HeadSprite, scale: number): { level: number; image: cv.Mat; alpha: cv.Mat } {
  let level = 1;
  while (scale / (level / 2) < 1.25 && level > 1 / 64) level /= 2; // keep the remaining warp scale >= ~0.6
  if (level === 1) return { level, image: sprite.image, alpha: sprite.alpha };
  const key = `${sprite.face.id}@${level}`;
  let m = mipCache.get(key);
  if (!m) {
    const w = Math.max(2, Math.round(sprite.image.cols * level));
    const h = Math.max(2, Math.round(sprite.image.rows * level));
    m = { image: sprite.image.resize(h, w, 0, 0, cv.INTER_AREA), alpha: sprite.alpha.resize(h, w, 0, 0, cv.INTER_AREA) };
    mipCache.set(key, m);
  }
  return { level: m.image.cols / sprite.image.cols, ...m };
}

/** Warps the head sprite into the frame and blends it by its soft edge, the light's gain and the opacity. */
export function pasteHead(frame: cv.Mat, sprite: HeadSprite, pose: Pose): void {
  if (pose.opacity <= 0) return;
  const { level, image, alpha } = spriteLevel(sprite, pose.faceWidth / sprite.faceW);
  const m = headTransform(sprite, pose, level);
  const corners: Polygon = [[0, 0], [image.cols, 0], [image.cols, image.rows], [0, image.rows]].map((p) => apply(m, p as Point));
  const roi = bounds([corners], frame.cols, frame.rows);
  if (!roi) return;
  const local = new cv.Mat(mul(translate(-roi.x, -roi.y), m), cv.CV_64F);
  const size = new cv.Size(roi.width, roi.height);
  const warped = image.warpPerspective(local, size, cv.INTER_LINEAR, cv.BORDER_CONSTANT).convertTo(cv.CV_32FC3, pose.gain);
  const a = alpha.warpPerspective(local, size, cv.INTER_LINEAR, cv.BORDER_CONSTANT).convertTo(cv.CV_32FC3, pose.opacity);
  const region = frame.getRegion(roi);
  const base = region.convertTo(cv.CV_32FC3);
  base.add(a.hMul(warped.sub(base))).convertTo(cv.CV_8UC3).copyTo(region);
}

export function drawPerson(frame: cv.Mat, look: PersonLook, pose: Pose, shapes: PersonShapes): void {
  fillPolygons(
    frame,
    [
      { poly: shapes.torso, colour: scaled(look.clothes, pose.gain) },
      { poly: shapes.neck, colour: scaled(look.sprite.skin, pose.gain * 0.85) },
    ],
    pose.opacity,
  );
  pasteHead(frame, look.sprite, pose);
}

/** A passer-by close to the camera, crossing the view: seen from behind, a dark body and the back of a head. */
export interface Passerby {
  /** Body centre x at frame `atFrame`, and speed in px per frame. */
  x: number;
  atFrame: number;
  vx: number;
  bodyWidth: number;
  /** y of the top of the shoulders. */
  shoulders: number;
  clothes: Colour;
  hair: Colour;
  firstFrame: number;
  lastFrame: number;
}

export function passerbyShapes(p: Passerby, frame: number, H: number): { body: Polygon; head: Polygon } {
  const cx = p.x + p.vx * (frame - p.atFrame);
  const w = p.bodyWidth;
  const top = p.shoulders;
  const body: Polygon = [
    [cx - 0.3 * w, top], [cx + 0.3 * w, top], [cx + 0.48 * w, top + 0.12 * w], [cx + 0.5 * w, top + 0.3 * w],
    [cx + 0.5 * w, H + 10], [cx - 0.5 * w, H + 10], [cx - 0.5 * w, top + 0.3 * w], [cx - 0.48 * w, top + 0.12 * w],
  ];
  const r = 0.22 * w;
  const head: Polygon = [];
  for (let k = 0; k < 20; k++) {
    const a = (k / 20) * 2 * Math.PI;
    head.push([cx + r * Math.cos(a), top - 0.9 * r + 1.2 * r * Math.sin(a)]);
  }
  return { body, head };
}

export function drawPasserby(frame: cv.Mat, p: Passerby, shapes: { body: Polygon; head: Polygon }): void {
  fillPolygons(frame, [{ poly: shapes.body, colour: new cv.Vec3(...p.clothes) }, { poly: shapes.head, colour: new cv.Vec3(...p.hair) }], 1);
}

function insidePolygon([x, y]: Point, poly: Polygon): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** 12 x 12 samples over a face box: 1/144 resolution on the visible share. */
const COVERAGE_SAMPLES = 12;

/**
 * Which share of a face box lies inside the frame, and which share of that is hidden by the given
 * polygons (things drawn after the face).
 */
export function coverage(box: Box, W: number, H: number, hiders: Polygon[]): { inFrame: number; hidden: number } {
  let inFrame = 0;
  let hidden = 0;
  const n = COVERAGE_SAMPLES;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const p: Point = [box.x + ((i + 0.5) / n) * box.width, box.y + ((j + 0.5) / n) * box.height];
      if (p[0] < 0 || p[1] < 0 || p[0] >= W || p[1] >= H) continue;
      inFrame++;
      if (hiders.some((poly) => insidePolygon(p, poly))) hidden++;
    }
  }
  return { inFrame: inFrame / (n * n), hidden: inFrame ? hidden / inFrame : 0 };
}
