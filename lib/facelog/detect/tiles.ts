// Where the model looks in a frame: a pyramid of scaled copies of the frame (levels), each cut
// into overlapping model-sized tiles. Level 0 is scaled so that a face of `minSize` frame pixels
// is MIN_FACE_MODEL_PX wide in the model's input; each further level is smaller and starts at the
// largest face the level before it holds whole in one of its tiles, until a level holds faces of
// 3/4 of the frame's height or the whole frame fits in one tile. With regions, the tiles of each
// level are placed around them instead of a grid.
import { MODEL_INPUT_SIZE } from './anchors.js';
import type { Box } from '../types.js';
import { expand } from '../geometry.js';

export const TILE_SIZE = MODEL_INPUT_SIZE;

/**
 * Smallest face width, model-input pixels, the back model finds reliably: 16. Measured on 137 real
 * faces (face-api's six sample photos, human's face-match grid, messi5.jpg) pasted onto vtest.avi
 * backgrounds at known widths, score >= 0.5 and IoU >= 0.5: recall 15% at 8 px, 51% at 10 px,
 * 72% at 12, 84% at 14, 91% at 16 (82% of the 22 photo faces), 94% at 18, 96% at 20 and 24,
 * 99% at 32 to 48, 100% at 64 to 128, 98% at 160, 87% at 200.
 */
export const MIN_FACE_MODEL_PX = 16;
/** Largest face width, model-input pixels, found as reliably (98% at 160 px, 87% at 200 px). */
export const MAX_FACE_MODEL_PX = 160;
/**
 * Tiles overlap by at least this many times MIN_FACE_MODEL_PX (plus the context margin), so that
 * a level holds faces up to at least twice its smallest face whole in one tile. Evenly spread
 * tiles usually overlap more, and the next level then starts at a larger face.
 */
const MIN_LEVEL_RATIO = 2;
/** Context around a face, as a share of its width, that a tile must show besides the face itself. */
const CONTEXT_MARGIN = 0.25;
/** Faces wider than this share of the frame's shorter side are not looked for: the head would not fit. */
const LARGEST_FACE_SHARE = 0.75;
/** Scaling small frames up beyond this adds no detail the model could use. */
const MAX_SCALE = 2;
/**
 * A region whose shorter side is below this share of a level's smallest face is not looked at on
 * that level: no face of that level fits in it (motion regions cover a moving person's head,
 * tracked faces come with a margin of one face on each side).
 */
const REGION_MIN_FACE_SHARE = 1;
/**
 * Around a tracked face the detector looks this many face widths to each side: its box is one
 * frame old, and a walking face moves a small part of its width per frame.
 */
export const TRACKED_FACE_MARGIN = 0.5;
/**
 * A tracked face is looked for on the finest level where it is at most this wide (model pixels):
 * the model finds 99-100% of faces 32-128 px wide, and the face with its margins and context
 * still fits in one tile.
 */
const TRACKED_FACE_MODEL_PX = 100;

/** One tile: its top-left corner in level pixels (it may reach past the level image: padded). */
export interface Tile {
  x: number;
  y: number;
}

export interface PyramidLevel {
  /** Level pixels per frame pixel. */
  scale: number;
  /** Size of the whole level image. */
  width: number;
  height: number;
  /** Face widths, frame pixels, this level is responsible for. */
  minFace: number;
  maxFace: number;
  tiles: Tile[];
}

/**
 * The levels and tiles that find faces at least `minSize` wide in a `width` x `height` frame.
 * With `regions` (frame pixels), only tiles around them: one tile for each group of nearby
 * regions that fits in one, a grid over larger ones. With `faces` (tracked faces), also tiles
 * around each face on its own level only (see TRACKED_FACE_MODEL_PX); `faces` without `regions`
 * means no regions. Levels left without tiles are dropped.
 */
export function planTiles(width: number, height: number, minSize: number, regions?: Box[], faces?: Box[]): PyramidLevel[] {
  if (faces && !regions) regions = [];
  const levels: PyramidLevel[] = [];
  const fitScale = TILE_SIZE / Math.max(width, height);
  const minOverlap = Math.ceil(MIN_FACE_MODEL_PX * MIN_LEVEL_RATIO * (1 + CONTEXT_MARGIN));
  let scale = Math.min(MAX_SCALE, MIN_FACE_MODEL_PX / minSize);
  /** The previous (finer) level's scale; 0 before the first. */
  let finerScale = 0;
  for (;;) {
    const w = Math.max(1, Math.round(width * scale));
    const h = Math.max(1, Math.round(height * scale));
    const xs = axisStarts(w, minOverlap);
    const ys = axisStarts(h, minOverlap);
    const overlap = Math.min(realisedOverlap(xs), realisedOverlap(ys));
    const maxFaceModel = Math.min(MAX_FACE_MODEL_PX, overlap / (1 + CONTEXT_MARGIN));
    const minFace = MIN_FACE_MODEL_PX / scale;
    const last = (w <= TILE_SIZE && h <= TILE_SIZE) || maxFaceModel / scale >= LARGEST_FACE_SHARE * Math.min(width, height);
    const level: PyramidLevel = { scale, width: w, height: h, minFace, maxFace: last ? Infinity : maxFaceModel / scale, tiles: [] };
    const grid = ys.flatMap((y) => xs.map((x) => ({ x, y })));
    if (!regions) {
      level.tiles = grid;
    } else {
      // A face lies inside its region (motion covers the moving head, a tracked face has a margin),
      // so around a region the tile needs only the context of the level's faces.
      const margin = Math.ceil(CONTEXT_MARGIN * MIN_FACE_MODEL_PX * MIN_LEVEL_RATIO);
      const wanted = regions.filter((r) => Math.min(r.width, r.height) >= minFace * REGION_MIN_FACE_SHARE);
      // The finest level where the tracked face is at most TRACKED_FACE_MODEL_PX; the last level
      // takes every larger face.
      const mine = (faces ?? []).filter((f) => (last || f.width * scale <= TRACKED_FACE_MODEL_PX) && (finerScale === 0 || f.width * finerScale > TRACKED_FACE_MODEL_PX));
      wanted.push(...mine.map((f) => expand(f, TRACKED_FACE_MARGIN, width, height)));
      const around = tilesAround(wanted.map((r) => toLevel(r, level, margin)), w, h, minOverlap);
      // Regions all over the frame: the plain grid is no more work.
      level.tiles = around.length < grid.length ? around : grid;
    }
    if (level.tiles.length > 0) levels.push(level);
    if (last) break;
    finerScale = scale;
    // The next level's smallest face is this level's largest; the whole frame in one tile at most.
    scale = Math.max(fitScale, (scale * MIN_FACE_MODEL_PX) / maxFaceModel);
  }
  return levels;
}

/** Tile starts along one axis of `length` level pixels, spread evenly, overlapping by >= `overlap`. */
export function axisStarts(length: number, overlap: number, start = 0): number[] {
  if (length <= TILE_SIZE) return [start];
  const n = Math.ceil((length - overlap) / (TILE_SIZE - overlap));
  const starts: number[] = [];
  for (let i = 0; i < n; i++) starts.push(start + Math.round((i * (length - TILE_SIZE)) / (n - 1)));
  return starts;
}

/** The smallest overlap of neighbouring tiles (unbounded with a single tile). */
function realisedOverlap(starts: number[]): number {
  let overlap = Infinity;
  for (let i = 1; i < starts.length; i++) overlap = Math.min(overlap, TILE_SIZE - (starts[i] - starts[i - 1]));
  return overlap;
}

/** Level-pixel rectangle [x0, x1) x [y0, y1). */
interface Span {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** Region `r` in level pixels, grown by `margin` on each side (a face on its edge needs context) and clipped. */
function toLevel(r: Box, level: PyramidLevel, margin: number): Span {
  return {
    x0: Math.max(0, Math.floor(r.x * level.scale - margin)),
    y0: Math.max(0, Math.floor(r.y * level.scale - margin)),
    x1: Math.min(level.width, Math.ceil((r.x + r.width) * level.scale + margin)),
    y1: Math.min(level.height, Math.ceil((r.y + r.height) * level.scale + margin)),
  };
}

/**
 * Tiles covering every span: greedily, the largest span left takes the other spans that still fit
 * in one tile with it and gets a tile centred on them; a span larger than a tile gets a grid.
 */
function tilesAround(spans: Span[], width: number, height: number, overlap: number): Tile[] {
  const pending = spans.filter((s) => s.x1 > s.x0 && s.y1 > s.y0).sort((a, b) => size(b) - size(a));
  const tiles: Tile[] = [];
  const covered = (s: Span) => tiles.some((t) => s.x0 >= t.x && s.y0 >= t.y && s.x1 <= t.x + TILE_SIZE && s.y1 <= t.y + TILE_SIZE);
  while (pending.length > 0) {
    let group = pending.shift()!;
    if (covered(group)) continue;
    if (group.x1 - group.x0 > TILE_SIZE || group.y1 - group.y0 > TILE_SIZE) {
      for (const y of axisStarts(group.y1 - group.y0, overlap, group.y0)) {
        for (const x of axisStarts(group.x1 - group.x0, overlap, group.x0)) tiles.push(clamp({ x, y }, width, height));
      }
      continue;
    }
    for (let i = 0; i < pending.length; i++) {
      const u = union(group, pending[i]);
      if (u.x1 - u.x0 <= TILE_SIZE && u.y1 - u.y0 <= TILE_SIZE) {
        group = u;
        pending.splice(i--, 1);
      }
    }
    const centre = { x: Math.round((group.x0 + group.x1 - TILE_SIZE) / 2), y: Math.round((group.y0 + group.y1 - TILE_SIZE) / 2) };
    tiles.push(clamp(centre, width, height));
  }
  return tiles;
}

/** The tile moved inside the level image where it fits (a smaller image is padded at its end). */
function clamp(t: Tile, width: number, height: number): Tile {
  return { x: Math.max(0, Math.min(t.x, width - TILE_SIZE)), y: Math.max(0, Math.min(t.y, height - TILE_SIZE)) };
}

function union(a: Span, b: Span): Span {
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

function size(s: Span): number {
  return (s.x1 - s.x0) * (s.y1 - s.y0);
}
