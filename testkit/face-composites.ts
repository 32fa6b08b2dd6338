// Test scenes for the face detector: real faces from package-shipped photos, pasted at known
// sizes onto real backgrounds (frames of OpenCV's vtest.avi), so that where each face is and how
// wide it is are known by construction. Shared by test/40.facelog-detector and the detector bench.
import { createRequire } from 'node:module';
import path from 'node:path';
import cv from '../lib/video/opencv.js';
import type { FaceDetector } from '../lib/facelog/detect/detector.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Box } from '../lib/facelog/types.js';
import { OPENCV_DATA_DIR, VTEST_AVI } from './opencv-data.js';

const require = createRequire(import.meta.url);
const FACE_API_DIR = path.dirname(require.resolve('@vladmandic/face-api/package.json'));
// human's package exports no package.json; it sits beside face-api under @vladmandic/.
const HUMAN_DIR = path.join(path.dirname(FACE_API_DIR), 'human');

/** face-api's demo photos: groups of women, 1920 px wide, faces 160-260 px. */
export const FACE_API_SAMPLES = [1, 2, 3, 4, 5, 6].map((i) => path.join(FACE_API_DIR, 'demo', `sample${i}.jpg`));
/** human's face-match screenshot: a grid of ~110 face thumbnails (60-80 px), men and women. */
export const FACE_MATCH_GRID = path.join(HUMAN_DIR, 'assets', 'screenshot-facematch.jpg');
/** The grid's first row of thumbnails (y 270..410 of the 1920x954 image) shows men. */
const FACE_MATCH_MEN_ROW = { y: 270, height: 140 };
export const MESSI = path.join(OPENCV_DATA_DIR, 'messi5.jpg');

/** A face in a photo, located by the detector at a comfortable scale. */
export interface SourceFace {
  photo: cv.Mat;
  box: Box;
  score: number;
  /** Photo file and face index, for messages. */
  name: string;
}

/**
 * Score a located face must have at a comfortable scale: real faces score 0.75-0.95 there; the
 * grid's thumbnail borders give a few 0.5-0.55 detections across two half faces and a label.
 */
export const SOURCE_MIN_SCORE = 0.7;

/** Side of the square crop, in face widths, in which a face is re-detected ~100 px wide. */
const REFINE_CROP_FACES = 2.5;

/**
 * The faces of `photo` at least `minSize` wide, each re-detected in a 256 px crop where it is
 * ~100 px wide (one model tile at scale 1) for a steadier box.
 */
export function locateFaces(detector: FaceDetector, photo: cv.Mat, minSize: number, name = 'photo'): SourceFace[] {
  const faces: SourceFace[] = [];
  for (const [i, f] of detector.detect(photo, { minSize }).entries()) {
    const side = f.box.width * REFINE_CROP_FACES;
    const s = 256 / side;
    const cx = f.box.x + f.box.width / 2;
    const cy = f.box.y + f.box.height / 2;
    const m = new cv.Mat([[s, 0, 128 - cx * s], [0, s, 128 - cy * s]], cv.CV_64F);
    const crop = photo.warpAffine(m, new cv.Size(256, 256), cv.INTER_AREA);
    const back = (b: Box): Box => ({ x: (b.x - 128) / s + cx, y: (b.y - 128) / s + cy, width: b.width / s, height: b.height / s });
    const again = detector.detect(crop, { minSize: 16 }).map((g) => ({ ...g, box: back(g.box) }));
    const best = again.sort((a, b) => iou(b.box, f.box) - iou(a.box, f.box))[0];
    const chosen = best && iou(best.box, f.box) >= 0.5 ? best : f;
    if (chosen.score >= SOURCE_MIN_SCORE) faces.push({ photo, box: chosen.box, score: chosen.score, name: `${path.basename(name)}#${i}` });
  }
  return faces;
}

/** The men of the face-match grid's first row, left to right. */
export function menOfFaceMatchGrid(detector: FaceDetector): SourceFace[] {
  const grid = cv.imread(FACE_MATCH_GRID);
  const row = grid.getRegion(new cv.Rect(0, FACE_MATCH_MEN_ROW.y, grid.cols, FACE_MATCH_MEN_ROW.height)).copy();
  return locateFaces(detector, row, 40, 'face-match row 1').sort((a, b) => a.box.x - b.box.x);
}

/** Context pasted around a face, in face widths on each side (hair, ears, neck). */
const PASTE_MARGIN = 0.6;

/**
 * Pastes `face` into `background` (in place) scaled to `width` px, its box's top-left at x, y.
 * Returns where its box is now.
 */
export function pasteFace(background: cv.Mat, face: SourceFace, width: number, x: number, y: number): Box {
  const { photo, box } = face;
  const px0 = Math.max(0, Math.floor(box.x - PASTE_MARGIN * box.width));
  const py0 = Math.max(0, Math.floor(box.y - PASTE_MARGIN * box.width));
  const px1 = Math.min(photo.cols, Math.ceil(box.x + box.width * (1 + PASTE_MARGIN)));
  const py1 = Math.min(photo.rows, Math.ceil(box.y + box.height + PASTE_MARGIN * box.width));
  const s = width / box.width;
  const dx = Math.round(x + (px0 - box.x) * s);
  const dy = Math.round(y + (py0 - box.y) * s);
  const w = Math.round((px1 - px0) * s);
  const h = Math.round((py1 - py0) * s);
  const scaled = photo.getRegion(new cv.Rect(px0, py0, px1 - px0, py1 - py0)).resize(h, w, 0, 0, s < 1 ? cv.INTER_AREA : cv.INTER_LINEAR);
  // Clip to the background.
  const bx0 = Math.max(0, dx);
  const by0 = Math.max(0, dy);
  const bx1 = Math.min(background.cols, dx + w);
  const by1 = Math.min(background.rows, dy + h);
  scaled
    .getRegion(new cv.Rect(bx0 - dx, by0 - dy, bx1 - bx0, by1 - by0))
    .copyTo(background.getRegion(new cv.Rect(bx0, by0, bx1 - bx0, by1 - by0)));
  // The actual scale after rounding the pasted size.
  const sx = w / (px1 - px0);
  const sy = h / (py1 - py0);
  return { x: dx + (box.x - px0) * sx, y: dy + (box.y - py0) * sy, width: box.width * sx, height: box.height * sy };
}

/** Room a face takes when several are laid out in one frame, in face widths (0.4 each side). */
const LAYOUT_FOOTPRINT = 1.8;

export interface Placement {
  face: SourceFace;
  width: number;
}

/**
 * Pastes several faces into `frame` (in place), laid out in rows left to right with the spare room
 * spread between them; `shift` (-1..1) moves them within that room. Larger faces are pasted first
 * so that the context of a large face never covers a smaller one. Returns the boxes, in order.
 */
export function pasteFaces(frame: cv.Mat, placements: Placement[], shift = 0): Box[] {
  const rows: Placement[][] = [[]];
  let used = 0;
  for (const p of placements) {
    const room = p.width * LAYOUT_FOOTPRINT;
    if (used + room > frame.cols && rows[rows.length - 1].length > 0) {
      rows.push([]);
      used = 0;
    }
    rows[rows.length - 1].push(p);
    used += room;
  }
  const rowHeight = (row: Placement[]) => Math.max(...row.map((p) => p.width * LAYOUT_FOOTPRINT));
  const rowWidth = (row: Placement[]) => row.reduce((sum, p) => sum + p.width * LAYOUT_FOOTPRINT, 0);
  const totalHeight = rows.reduce((sum, row) => sum + rowHeight(row), 0);
  if (totalHeight > frame.rows || rows.some((row) => rowWidth(row) > frame.cols)) throw new Error(`faces do not fit in ${frame.cols}x${frame.rows}`);
  const vGap = (frame.rows - totalHeight) / (rows.length + 1);
  const where = new Map<Placement, { x: number; y: number }>();
  let top = vGap;
  for (const row of rows) {
    const hGap = (frame.cols - rowWidth(row)) / (row.length + 1);
    let left = hGap;
    for (const p of row) {
      const margin = (p.width * (LAYOUT_FOOTPRINT - 1)) / 2;
      where.set(p, { x: left + margin + (shift * hGap) / 2, y: top + (rowHeight(row) - p.width) / 2 + (shift * vGap) / 2 });
      left += p.width * LAYOUT_FOOTPRINT + hGap;
    }
    top += rowHeight(row) + vGap;
  }
  const boxes = new Map<Placement, Box>();
  for (const p of [...placements].sort((a, b) => b.width - a.width)) {
    const { x, y } = where.get(p)!;
    boxes.set(p, pasteFace(frame, p.face, p.width, x, y));
  }
  return placements.map((p) => boxes.get(p)!);
}

/** Frames `indices` (ascending) of vtest.avi (768x576 outdoor scene, small people), resized. */
export function vtestFrames(indices: number[], width: number, height: number): cv.Mat[] {
  const capture = new cv.VideoCapture(VTEST_AVI);
  const frames: cv.Mat[] = [];
  try {
    for (let i = 0; i <= Math.max(...indices); i++) {
      const frame = capture.read();
      if (frame.empty) break;
      if (indices.includes(i)) frames.push(frame.resize(height, width, 0, 0, cv.INTER_LINEAR));
    }
  } finally {
    capture.release();
  }
  return frames;
}

/** The detection that overlaps `box` most, with its IoU (0 when none). */
export function bestMatch<T extends { box: Box }>(detections: T[], box: Box): { detection?: T; iou: number } {
  let best: { detection?: T; iou: number } = { iou: 0 };
  for (const d of detections) {
    const v = iou(d.box, box);
    if (v > best.iou) best = { detection: d, iou: v };
  }
  return best;
}
