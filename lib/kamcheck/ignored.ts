// A camera's ignored areas at the working size: the pixels they cover, which the whole-picture
// measurements (exposure, black, freeze, the camera shift's features) leave out, and the grid
// cells they touch, which the cell measurements (mask, veil, blur, night) leave out. A cell counts
// as ignored when a tenth of it is: a moving screen drawn round loosely still moves inside the
// cells its outline cuts.
import cv from '../video/opencv.js';
import { cellMeans, CELL_COUNT, type WorkingSize } from './cells.js';

/** An area as the camera's settings give it: [x, y] points as fractions of the picture. */
export type IgnoreArea = [number, number][];

/** Share of a cell that the areas must cover for the cell to be left out. */
export const IGNORED_CELL_SHARE = 0.1;

export interface Ignored {
  /** CV_8U at the working size: 255 where the picture is checked, 0 in the areas. */
  checked: cv.Mat;
  /** Per grid cell, row-major: true when the cell is left out. */
  cells: boolean[];
}

/** The areas at the working size; null when there are none. */
export function ignoredAt(areas: IgnoreArea[] | undefined, size: WorkingSize): Ignored | null {
  if (!areas || areas.length === 0) return null;
  const checked = new cv.Mat(size.height, size.width, cv.CV_8U, 255);
  const polygons = areas.map((a) => a.map(([x, y]) => new cv.Point2(Math.round(x * size.width), Math.round(y * size.height))));
  checked.drawFillPoly(polygons, new cv.Vec3(0, 0, 0), cv.LINE_8);
  // the share of each cell the areas cover: 1 - the mean of the checked mask scaled to 0..1
  const share = cellMeans(checked.convertTo(cv.CV_32F, -1 / 255, 1));
  const cells = Array.from({ length: CELL_COUNT }, (_, i) => share[i] >= IGNORED_CELL_SHARE);
  return { checked, cells };
}
