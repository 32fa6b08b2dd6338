// Where the model looks in a frame: a pyramid of scaled copies of the frame (levels), each cut
// into overlapping model-sized tiles. Level 0 is scaled so that a face of `minSize` frame pixels
// is MIN_FACE_MODEL_PX wide in the model's input; each further level is smaller and starts at the
// largest face the level before it holds whole in one of its tiles, until a level holds faces of
// 3/4 of the frame's height or the whole frame fits in one tile. With regions, the tiles of each
// level are placed around them instead of a grid, each as small as its regions allow (TILE_SIZES),
// and each tracked face gets a small tile of its own at the scale that suits it.
import { MODEL_INPUT_SIZE, MODEL_SIZES, type ModelSize } from './model-sizes.js';
import type { Box, TrackedFace } from '../types.js';

/** The side of a grid tile, and of the largest tile. */
export const TILE_SIZE = MODEL_INPUT_SIZE;
/** Tile sides: those the detector has a model for (model-sizes.ts), costing in proportion to their area. */
export const TILE_SIZES = MODEL_SIZES;
export type TileSize = ModelSize;

/**
 * The cost of a tile in forward passes of a whole TILE_SIZE tile: the area ratio, which measured
 * passes follow about (Debian's OpenCV 4.6 through its Python binding, a quiet machine): 14.9 ms
 * at 256, 8.5 ms at 192, 4.4 ms at 128 on one thread; 9.4, 5.9 and 3.3 ms on the two a pass runs
 * on (blazeface-opencv.ts, FORWARD_THREADS); onnxruntime takes less (tile-runtime.ts). Other files
 * quote these times from here.
 * `node build/scripts/bench-facelog-detector.js` prints a 256 tile's cost as the face log runs it.
 */
export function tileCost(size: number): number {
  return (size / TILE_SIZE) ** 2;
}

/** The smallest tile side that holds `length` pixels (TILE_SIZE for anything larger). */
export function tileSizeFor(length: number): TileSize {
  return TILE_SIZES.find((s) => s >= length) ?? TILE_SIZE;
}

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
 * that level: no face of that level fits in it (motion regions cover a moving person's head).
 */
const REGION_MIN_FACE_SHARE = 1;
/**
 * Around a tracked face the detector looks this many face widths to each side: its box is where
 * KCF has it in this frame, and KCF's error is a small part of the face's width...
 */
export const TRACKED_FACE_MARGIN = 0.5;
/**
 * ...unless the last run missed the face (KCF may have followed something else while a person
 * crossed in front), or the face moves fast (its own motion puts it more than FAST_FACE_SHIFT of
 * its width away from KCF's box: a person turning to leave close to the camera crosses up to 3
 * face widths between two runs, which KCF does not follow): then this many.
 */
export const LOST_FACE_MARGIN = 2.5;
const FAST_FACE_SHIFT = 0.5;
/**
 * A tracked face is looked for in one tile, scaled so that the face is this wide (model pixels):
 * the face and its margins fill a 128 tile (a quarter of a 256 one's cost), a lost face's fill a
 * 256 tile. Measured on 17 pasted faces (vtest.avi background at 1280x720, tracked box off by a
 * quarter of its width): mean score 0.86-0.90 at 64 px in a 128 tile, 0.89-0.91 at 64 px in a
 * 192 tile, but 0.80-0.83 at 48 px in any tile and 0.79-0.88 at 100 px in a 256 tile; the
 * whole-frame search scores the same faces 0.76-0.93 (lower for the smaller ones). Scores
 * matter beyond finding the face: sightings are filtered by their best scores (run.ts).
 */
const TRACKED_FACE_MODEL_PX = 64;
/**
 * Smallest the tracked face may get to fit a wide search span in one tile (model pixels; the model
 * finds 96% of faces 20-24 px wide): where its own motion puts it further, that place is left to
 * the motion regions (an extrapolation over a long gap can point anywhere).
 */
const MIN_TRACKED_FACE_MODEL_PX = 24;

/**
 * Context around a region that its tile shows besides the region, as a share of the largest face
 * that can stick out of it (one as large as the region's shorter side, at most the level's
 * largest): only part of a head may have moved, and the tile's edge would cut the face. 0.5 of the
 * level's largest face for every region (up to 80 model px at coarse levels) made most tiles 192
 * or 256 px; of the region's size, 128 px tiles are the rule (720p bench, budget 2: faces in a
 * track 95.6% and 98.8%).
 */
const REGION_CONTEXT = 0.5;

/** One tile: its top-left corner in level pixels (it may reach past the level image: padded), and its side. */
export interface Tile {
  x: number;
  y: number;
  size: TileSize;
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
  /** A tracked face's own level (its scale suits that face), not one of the pyramid's. */
  trackedFace?: boolean;
}

/**
 * The levels and tiles that find faces at least `minSize` wide in a `width` x `height` frame.
 * With `regions` (frame pixels), only tiles around them: one tile for each group of nearby
 * regions that fits in one, as small as the group allows, a grid over larger ones. With `faces`
 * (tracked faces), also one small tile per face, on a level of its own that shows the face at
 * TRACKED_FACE_MODEL_PX; `faces` without `regions` means no regions. Levels left without tiles
 * are dropped.
 */
export function planTiles(width: number, height: number, minSize: number, regions?: Box[], faces?: TrackedFace[]): PyramidLevel[] {
  if (faces && !regions) regions = [];
  const levels: PyramidLevel[] = [];
  const fitScale = TILE_SIZE / Math.max(width, height);
  const minOverlap = Math.ceil(MIN_FACE_MODEL_PX * MIN_LEVEL_RATIO * (1 + CONTEXT_MARGIN));
  let scale = Math.min(MAX_SCALE, MIN_FACE_MODEL_PX / minSize);
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
    const grid: Tile[] = ys.flatMap((y) => xs.map((x) => ({ x, y, size: TILE_SIZE })));
    if (!regions) {
      level.tiles = grid;
    } else {
      // A face lies inside its region, or sticks out of it a little (motion covers the moving
      // head): around a region the tile needs the context of the level's largest faces.
      const wanted = regions.filter((r) => Math.min(r.width, r.height) >= minFace * REGION_MIN_FACE_SHARE);
      const margin = (r: Box) => {
        const face = Math.min(maxFaceModel, Math.min(r.width, r.height) * scale);
        return Math.ceil(Math.max(CONTEXT_MARGIN * MIN_FACE_MODEL_PX * MIN_LEVEL_RATIO, REGION_CONTEXT * face));
      };
      const around = tilesAround(wanted.map((r) => toLevel(r, level, margin(r))), w, h, minOverlap);
      // Regions all over the frame: the plain grid is no more work.
      level.tiles = costOf(around) < costOf(grid) ? around : grid;
    }
    if (level.tiles.length > 0) levels.push(level);
    if (last) break;
    // The next level's smallest face is this level's largest; the whole frame in one tile at most.
    scale = Math.max(fitScale, (scale * MIN_FACE_MODEL_PX) / maxFaceModel);
  }
  for (const face of faces ?? []) levels.push(trackedFaceLevel(face, width, height));
  return levels;
}

/** The cost of a list of tiles, in whole TILE_SIZE forward passes. */
export function costOf(tiles: Tile[]): number {
  return tiles.reduce((n, t) => n + tileCost(t.size), 0);
}

/**
 * Where the detector looks for a tracked face (frame pixels): around its box and where its own
 * motion puts it, TRACKED_FACE_MARGIN (LOST_FACE_MARGIN when lost or fast) face widths to each side.
 */
export function trackedFaceSpan(face: TrackedFace): Box {
  const m = (searchesWide(face) ? LOST_FACE_MARGIN : TRACKED_FACE_MARGIN) * face.width;
  const boxes = face.moving && reachable(face, face.moving) ? [face, face.moving] : [face];
  const x0 = Math.min(...boxes.map((b) => b.x)) - m;
  const y0 = Math.min(...boxes.map((b) => b.y)) - m;
  const x1 = Math.max(...boxes.map((b) => b.x + b.width)) + m;
  const y1 = Math.max(...boxes.map((b) => b.y + b.height)) + m;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

function searchesWide(face: TrackedFace): boolean {
  return !!face.lost || (!!face.moving && reachable(face, face.moving) && shift(face, face.moving) > FAST_FACE_SHIFT * face.width);
}

/** Whether a tile can hold both boxes with a lost face's margins and the face at MIN_TRACKED_FACE_MODEL_PX. */
function reachable(face: Box, moving: Box): boolean {
  const side = Math.max(Math.abs(moving.x - face.x) + Math.max(face.width, moving.width), Math.abs(moving.y - face.y) + Math.max(face.height, moving.height));
  return (side + 2 * LOST_FACE_MARGIN * face.width) * (MIN_TRACKED_FACE_MODEL_PX / face.width) <= TILE_SIZE;
}

function shift(a: Box, b: Box): number {
  return Math.hypot(b.x + b.width / 2 - (a.x + a.width / 2), b.y + b.height / 2 - (a.y + a.height / 2));
}

/**
 * A level of its own for a tracked face: one tile on its search span (trackedFaceSpan), the frame
 * scaled so that the face is TRACKED_FACE_MODEL_PX wide (or high, if higher), or less where the
 * span would not fit a whole tile (at most MAX_SCALE); the tile as small as the span allows.
 */
function trackedFaceLevel(face: TrackedFace, width: number, height: number): PyramidLevel {
  const span = trackedFaceSpan(face);
  const side = Math.max(span.width, span.height);
  const scale = Math.min(MAX_SCALE, TRACKED_FACE_MODEL_PX / Math.max(1, face.width, face.height), TILE_SIZE / Math.max(1, side));
  const size = tileSizeFor(Math.ceil(side * scale));
  const w = Math.max(1, Math.round(width * scale));
  const h = Math.max(1, Math.round(height * scale));
  const cx = (span.x + span.width / 2) * scale;
  const cy = (span.y + span.height / 2) * scale;
  const tile = clamp({ x: Math.round(cx - size / 2), y: Math.round(cy - size / 2), size }, w, h);
  return { scale, width: w, height: h, minFace: MIN_FACE_MODEL_PX / scale, maxFace: MAX_FACE_MODEL_PX / scale, tiles: [tile], trackedFace: true };
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
 * Tiles covering every span: greedily, the largest span left takes the other spans that fit in one
 * tile with it when one tile for both costs no more than a tile for each, and gets a tile centred
 * on them, as small as TILE_SIZES allow; a span larger than a tile gets a grid.
 */
function tilesAround(spans: Span[], width: number, height: number, overlap: number): Tile[] {
  const pending = spans.filter((s) => s.x1 > s.x0 && s.y1 > s.y0).sort((a, b) => size(b) - size(a));
  const tiles: Tile[] = [];
  const covered = (s: Span) => tiles.some((t) => s.x0 >= t.x && s.y0 >= t.y && s.x1 <= t.x + t.size && s.y1 <= t.y + t.size);
  const side = (s: Span) => Math.max(s.x1 - s.x0, s.y1 - s.y0);
  const cost = (s: Span) => tileCost(tileSizeFor(side(s)));
  while (pending.length > 0) {
    let group = pending.shift()!;
    if (covered(group)) continue;
    if (side(group) > TILE_SIZE) {
      for (const y of axisStarts(group.y1 - group.y0, overlap, group.y0)) {
        for (const x of axisStarts(group.x1 - group.x0, overlap, group.x0)) tiles.push(clamp({ x, y, size: TILE_SIZE }, width, height));
      }
      continue;
    }
    for (let i = 0; i < pending.length; i++) {
      const u = union(group, pending[i]);
      if (side(u) <= TILE_SIZE && cost(u) <= cost(group) + cost(pending[i])) {
        group = u;
        pending.splice(i--, 1);
      }
    }
    const tileSize = tileSizeFor(side(group));
    const centre = { x: Math.round((group.x0 + group.x1 - tileSize) / 2), y: Math.round((group.y0 + group.y1 - tileSize) / 2), size: tileSize };
    tiles.push(clamp(centre, width, height));
  }
  return tiles;
}

/** The tile moved inside the level image where it fits (a smaller image is padded at its end). */
function clamp(t: Tile, width: number, height: number): Tile {
  return { x: Math.max(0, Math.min(t.x, width - t.size)), y: Math.max(0, Math.min(t.y, height - t.size)), size: t.size };
}

function union(a: Span, b: Span): Span {
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

function size(s: Span): number {
  return (s.x1 - s.x0) * (s.y1 - s.y0);
}
