// The labelled face pictures (faces.json) and the head sprites cut from them: a head crop with a
// feathered elliptical edge, and where its face box is, so a composed frame knows its own truth.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cv from '../../lib/video/opencv.js';
import type { Gender } from './truth.js';

/** The repository root (this file runs as build/testkit/facelog-fixtures/faces.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FACE_LIST = path.join(REPO_ROOT, 'testkit/facelog-fixtures/faces.json');

/** [x, y, width, height] in source pixels. */
export type Rect = [number, number, number, number];

export interface LabelledFace {
  id: string;
  identity: string;
  gender: Gender;
  /** Within ~25 degrees of yaw and ~15 of roll, not bowed: the only ones the generator pastes. */
  frontal: boolean;
  /** Relative to the repository root, or absolute. */
  source: string;
  /** The crop pasted as the head: the face with a margin of hair and neck. */
  head: Rect;
  /** Brows to chin, cheek to cheek. */
  face: Rect;
  /** The crop carries the captions of human's face-match demo (removed by inpainting). */
  overlay_text?: boolean;
  note?: string;
}

export function loadFaceList(file = FACE_LIST): LabelledFace[] {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { faces: LabelledFace[] };
  for (const f of doc.faces) {
    const [hx, hy, hw, hh] = f.head;
    const [fx, fy, fw, fh] = f.face;
    if (f.gender !== 'male' && f.gender !== 'female') throw new Error(`${f.id}: gender ${f.gender}`);
    if (fx < hx || fy < hy || fx + fw > hx + hw || fy + fh > hy + hh) throw new Error(`${f.id}: face box outside the head crop`);
  }
  return doc.faces;
}

/** Frontal faces grouped by identity, per gender. */
export function identitiesByGender(faces: LabelledFace[]): Record<Gender, Map<string, LabelledFace[]>> {
  const out: Record<Gender, Map<string, LabelledFace[]>> = { male: new Map(), female: new Map() };
  for (const f of faces) {
    if (!f.frontal) continue;
    const list = out[f.gender].get(f.identity) ?? [];
    list.push(f);
    out[f.gender].set(f.identity, list);
  }
  return out;
}

export interface HeadSprite {
  face: LabelledFace;
  /** BGR head crop. */
  image: cv.Mat;
  /** Opacity 0..1 (CV_32FC3): an ellipse inscribed in the crop with a soft edge. */
  alpha: cv.Mat;
  /** Face box centre and size, crop pixels. */
  faceCx: number;
  faceCy: number;
  faceW: number;
  faceH: number;
  /** The ellipse at half opacity as a polygon, crop pixels: what hides things behind the head. */
  outline: Array<[number, number]>;
  /** Mean colour (BGR) of the middle of the face: the neck is drawn in it. */
  skin: [number, number, number];
}

/** 0.07: width of the soft edge as a share of the crop's smaller side. */
const FEATHER = 0.07;
/**
 * Faces darker than this (mean grey of the middle of the face) are brightened to it: a face lost in
 * a dark room (opencv-doc's imgs.jpg, ~40) is a test of exposure, not of the face log. The path's
 * own lighting change is applied on top.
 */
const MIN_FACE_GREY = 95;
/** Rows of the face-match grid cells that hold captions: the percentage on top, age and gender below. */
const CAPTION_TOP_ROWS = 20;
const CAPTION_BOTTOM_ROWS = 17;

function resolveSource(source: string): string {
  return path.isAbsolute(source) ? source : path.join(REPO_ROOT, source);
}

/**
 * Caption pixels in the caption rows, grown by 1 px and painted over from around them. Captions are
 * thin light-grey strokes, partly transparent: bright against the surroundings (a white top-hat of
 * 12 grey levels over a 7 px disc) or light grey outright (grey > 120), and unsaturated (< 70 of
 * 255; skin has ~80-150).
 */
function removeCaptions(crop: cv.Mat): cv.Mat {
  const grey = crop.bgrToGray();
  const disc = cv.getStructuringElement(cv.MORPH_ELLIPSE, new cv.Size(7, 7));
  const strokes = grey.morphologyEx(disc, cv.MORPH_TOPHAT).threshold(12, 255, cv.THRESH_BINARY);
  const light = grey.threshold(120, 255, cv.THRESH_BINARY);
  const unsaturated = crop.cvtColor(cv.COLOR_BGR2HSV).splitChannels()[1].threshold(70, 255, cv.THRESH_BINARY_INV);
  const bands = new cv.Mat(crop.rows, crop.cols, cv.CV_8UC1, 0);
  bands.drawRectangle(new cv.Point2(0, 0), new cv.Point2(crop.cols - 1, CAPTION_TOP_ROWS - 1), new cv.Vec3(255, 255, 255), -1);
  bands.drawRectangle(new cv.Point2(0, crop.rows - CAPTION_BOTTOM_ROWS), new cv.Point2(crop.cols - 1, crop.rows - 1), new cv.Vec3(255, 255, 255), -1);
  const mask = strokes.bitwiseOr(light).bitwiseAnd(unsaturated).bitwiseAnd(bands).dilate(new cv.Mat(3, 3, cv.CV_8UC1, 1), new cv.Point2(-1, -1), 1);
  return cv.inpaint(crop, mask, 3, cv.INPAINT_TELEA);
}

export function cutHead(face: LabelledFace, sourceImage: cv.Mat): HeadSprite {
  const [hx, hy, hw, hh] = face.head;
  let image = sourceImage.getRegion(new cv.Rect(hx, hy, hw, hh)).copy();
  if (face.overlay_text) image = removeCaptions(image);
  const feather = Math.max(2, FEATHER * Math.min(hw, hh));
  const ax = hw / 2 - feather;
  const ay = hh / 2 - feather;
  const mask = new cv.Mat(hh, hw, cv.CV_8UC3, [0, 0, 0]);
  mask.drawEllipse(new cv.Point2(hw / 2, hh / 2), new cv.Size(ax, ay), 0, 0, 360, new cv.Vec3(255, 255, 255), -1, cv.LINE_AA);
  const alpha = mask.gaussianBlur(new cv.Size(0, 0), feather / 2).convertTo(cv.CV_32FC3, 1 / 255);
  const outline: Array<[number, number]> = [];
  for (let k = 0; k < 24; k++) {
    const a = (k / 24) * 2 * Math.PI;
    outline.push([hw / 2 + ax * Math.cos(a), hh / 2 + ay * Math.sin(a)]);
  }
  const [fx, fy, fw, fh] = face.face;
  const centreRect = new cv.Rect(Math.round(fx - hx + fw * 0.3), Math.round(fy - hy + fh * 0.4), Math.max(1, Math.round(fw * 0.4)), Math.max(1, Math.round(fh * 0.3)));
  let m = image.getRegion(centreRect).mean();
  const grey = 0.114 * m.w + 0.587 * m.x + 0.299 * m.y;
  if (grey < MIN_FACE_GREY) {
    image = image.convertTo(cv.CV_8UC3, MIN_FACE_GREY / Math.max(grey, 1));
    m = image.getRegion(centreRect).mean();
  }
  return {
    face,
    image,
    alpha,
    faceCx: fx - hx + fw / 2,
    faceCy: fy - hy + fh / 2,
    faceW: fw,
    faceH: fh,
    outline,
    skin: [m.w, m.x, m.y], // Vec4: w, x, y are channels 0, 1, 2 (B, G, R)
  };
}

/** Head sprites, each source picture read once. */
export class HeadSprites {
  private readonly sources = new Map<string, cv.Mat>();
  private readonly sprites = new Map<string, HeadSprite>();

  get(face: LabelledFace): HeadSprite {
    let sprite = this.sprites.get(face.id);
    if (!sprite) {
      let src = this.sources.get(face.source);
      if (!src) {
        const file = resolveSource(face.source);
        src = cv.imread(file, cv.IMREAD_COLOR);
        if (src.empty) throw new Error(`cannot read face source ${file}`);
        this.sources.set(face.source, src);
      }
      sprite = cutHead(face, src);
      this.sprites.set(face.id, sprite);
    }
    return sprite;
  }
}
