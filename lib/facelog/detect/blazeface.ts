// FaceDetector with MediaPipe's BlazeFace back-camera model: the frame is cut into tiles of a
// scale pyramid chosen from min_size (tiles.ts), each tile is one forward pass, and the faces of
// all tiles are merged with MediaPipe's weighted NMS. Tiles are 256 px (the package's model) or
// smaller where a region allows (128 and 192: the same network rewritten for a smaller input by
// testkit/models/rewrite-blazeface.ts; one net per side). The forward pass runs in onnxruntime or
// OpenCV DNN (tile-runtime.ts).
//
// Forward-pass costs: tiles.ts, tileCost. Batching tiles is not done: with a batch-4 rewrite of
// the graph it saved under 10% a tile in OpenCV DNN, and in onnxruntime (one thread, load 1.5)
// it saved nothing: 1.82 against 1.77 ms a 128 tile, 8.17 against 7.35 ms a 256 tile.
import cv from '../../video/opencv.js';
import { liftDark } from '../low-light.js';
import type { RawFace } from './decode.js';
import { MIN_SIZE_SLACK, type FaceDetector } from './detector.js';
import { intersection } from '../geometry.js';
import { weightedNms } from './nms.js';
import { costOf, planTiles, tileCost, TILE_SIZES, trackedFaceSpan, type PyramidLevel, type Tile, type TileSize } from './tiles.js';
import { loadOpenCvTileModel } from './blazeface-opencv.js';
import { loadOnnxRuntimeTileModel } from './blazeface-onnxruntime.js';
import { DEFAULT_DETECTOR_RUNTIME, MIN_SCORE, type DetectorRuntime, type TileModel } from './tile-runtime.js';
import type { Box, DetectOptions, FaceDetection, FaceLandmarks, Point } from '../types.js';

export { MIN_SCORE, type DetectorRuntime, type TileModel };

export interface BlazeFaceOptions {
  /** Smallest score reported, 0..1. @defaultValue MIN_SCORE */
  minScore?: number;
  /** What runs the forward passes. @defaultValue DEFAULT_DETECTOR_RUNTIME */
  runtime?: DetectorRuntime;
}

export interface BlazeFaceDetector extends FaceDetector {
  /** Model forward passes (tiles) of the last detect() call. */
  readonly lastTileCount: number;
  /** Their cost in forward passes of a 256 tile (a 128 tile is a quarter). */
  readonly lastTileCost: number;
}

export function createBlazeFaceDetector(modelDir: string, opts: BlazeFaceOptions = {}): BlazeFaceDetector {
  const minScore = opts.minScore ?? MIN_SCORE;
  const runtime = opts.runtime ?? DEFAULT_DETECTOR_RUNTIME;
  const models = new Map<TileSize, TileModel>(TILE_SIZES.map((size) => [size, loadTileModel(modelDir, size, minScore, runtime)]));
  let lastTileCount = 0;
  let lastTileCost = 0;

  function detect(frame: cv.Mat, options: DetectOptions): FaceDetection[] {
    const levels = withScanPart(planTiles(frame.cols, frame.rows, options.minSize, options.regions, options.faces), frame, options);
    const found: RawFace[] = [];
    let tiles = 0;
    let cost = 0;
    for (const level of levels) {
      const part = levelPart(frame, level);
      for (const t of level.tiles) {
        tiles++;
        cost += tileCost(t.size);
        // The tile's place in `part`, whole pixels; its faces map back through the part's own scale.
        const x = t.x - part.levelX;
        const y = t.y - part.levelY;
        const tile = cutTile(part.image, x, y, t.size);
        const faces = models.get(t.size)!(tile);
        // Freed now too: a whole-frame scan cuts dozens of tiles, which would otherwise all wait
        // for the next collection at once and raise the heap's high-water mark.
        tile.release();
        for (const f of faces) {
          if (!cutByInnerEdge(f, t, level)) found.push(toFrame(f, part, x, y));
        }
      }
      // Freed now, not at the next garbage collection (see video/opencv-setup.ts); a view of the
      // frame only lets go of its share.
      part.image.release();
    }
    lastTileCount = tiles;
    lastTileCost = cost;
    const minWidth = options.minSize * (1 - MIN_SIZE_SLACK);
    // Faces outside the regions come from tiles reaching past them; a scan part looks everywhere.
    const regions = options.scanPart || (!options.regions && !options.faces) ? undefined : searched(options);
    return weightedNms(found)
      .filter((f) => f.box.width >= minWidth && (!regions || regions.some((r) => intersection(r, f.box) > 0)))
      .map(toDetection);
  }

  return {
    detect,
    cost: planCost,
    get lastTileCount() {
      return lastTileCount;
    },
    get lastTileCost() {
      return lastTileCost;
    },
  };
}

/** The model for `size` x `size` tiles (model-sizes.ts) in `runtime`, reporting faces that score at least `minScore`. */
export function loadTileModel(modelDir: string, size: TileSize, minScore = MIN_SCORE, runtime: DetectorRuntime = DEFAULT_DETECTOR_RUNTIME): TileModel {
  return runtime === 'onnxruntime' ? loadOnnxRuntimeTileModel(modelDir, size, minScore) : loadOpenCvTileModel(modelDir, size, minScore);
}

/**
 * Adds to the region plan the tiles of one share of the whole-frame plan (every `of`-th tile from
 * `index` on). Level scales depend only on the frame size and minSize, so level k of both plans
 * is the same image; the tracked faces' own levels are kept as they are.
 */
function withScanPart(levels: PyramidLevel[], frame: cv.Mat, options: DetectOptions): PyramidLevel[] {
  const part = options.scanPart;
  if (!part || !(options.regions || options.faces)) return levels;
  const full = planTiles(frame.cols, frame.rows, options.minSize);
  let n = 0;
  const pyramid = levels.filter((l) => !l.trackedFace);
  return full
    .map((level) => {
      const own = pyramid.find((l) => l.scale === level.scale)?.tiles ?? [];
      const extra = level.tiles.filter(() => n++ % part.of === part.index);
      const tiles = [...own, ...extra.filter((t) => !own.some((o) => o.x === t.x && o.y === t.y && o.size === t.size))];
      return { ...level, tiles };
    })
    .filter((level) => level.tiles.length > 0)
    .concat(levels.filter((l) => l.trackedFace));
}

/** The cost of one detect() call with these options, in 256 tiles (for budgeting calls). */
export function planCost(width: number, height: number, options: DetectOptions): number {
  return planTiles(width, height, options.minSize, options.regions, options.faces).reduce((n, l) => n + costOf(l.tiles), 0);
}

/** Where a region-mode call looks: its regions, and its tracked faces with their margin. */
function searched(options: DetectOptions): Box[] {
  const faces = (options.faces ?? []).map(trackedFaceSpan);
  return [...(options.regions ?? []), ...faces];
}

/** The part of a level its tiles need, scaled from the frame. */
interface LevelPart {
  image: cv.Mat;
  /** Frame pixel of the image's top-left corner, and image pixels per frame pixel. */
  frameX: number;
  frameY: number;
  scaleX: number;
  scaleY: number;
  /** Level pixel of the image's top-left corner. */
  levelX: number;
  levelY: number;
}

function levelPart(frame: cv.Mat, level: PyramidLevel): LevelPart {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = 0;
  let y1 = 0;
  for (const t of level.tiles) {
    x0 = Math.min(x0, t.x);
    y0 = Math.min(y0, t.y);
    x1 = Math.max(x1, Math.min(level.width, t.x + t.size));
    y1 = Math.max(y1, Math.min(level.height, t.y + t.size));
  }
  // Frame pixels under that part, rounded outwards.
  const fx0 = Math.max(0, Math.floor(x0 / level.scale));
  const fy0 = Math.max(0, Math.floor(y0 / level.scale));
  const fx1 = Math.min(frame.cols, Math.ceil(x1 / level.scale));
  const fy1 = Math.min(frame.rows, Math.ceil(y1 / level.scale));
  const levelX = Math.round(fx0 * level.scale);
  const levelY = Math.round(fy0 * level.scale);
  const w = Math.max(1, Math.round(fx1 * level.scale) - levelX);
  const h = Math.max(1, Math.round(fy1 * level.scale) - levelY);
  const image = scaleTo(frame.getRegion(new cv.Rect(fx0, fy0, fx1 - fx0, fy1 - fy0)), w, h);
  return { image, frameX: fx0, frameY: fy0, scaleX: w / (fx1 - fx0), scaleY: h / (fy1 - fy0), levelX, levelY };
}

/**
 * `src` resized to w x h. Halvings by pyrDown (blurred, so small levels do not alias) then one
 * bilinear step: INTER_AREA at a non-integer ratio costs 33 ms on a 1080p frame, this ~8 ms.
 */
function scaleTo(src: cv.Mat, w: number, h: number): cv.Mat {
  let image = src;
  // each halving is freed once the next is made (see video/opencv-setup.ts)
  const step = (next: cv.Mat) => {
    if (image !== src) image.release();
    image = next;
  };
  while (image.cols >= 2 * w && image.rows >= 2 * h && image.cols > 1 && image.rows > 1) step(image.pyrDown());
  if (image.cols !== w || image.rows !== h) step(image.resize(h, w, 0, 0, cv.INTER_LINEAR));
  return image;
}

/**
 * The `size` square at x, y of `image`, lifted if it is dark (low-light.ts, measured on the image
 * alone), padded with black where it reaches past the image.
 */
function cutTile(mat: cv.Mat, x: number, y: number, size: number): cv.Mat {
  const x0 = Math.max(0, x);
  const y0 = Math.max(0, y);
  const x1 = Math.min(mat.cols, x + size);
  const y1 = Math.min(mat.rows, y + size);
  const part = liftDark(mat.getRegion(new cv.Rect(x0, y0, x1 - x0, y1 - y0)));
  if (x1 - x0 === size && y1 - y0 === size) return part;
  const black = new cv.Vec3(0, 0, 0);
  const padded = part.copyMakeBorder(y0 - y, y + size - y1, x0 - x, x + size - x1, cv.BORDER_CONSTANT, black);
  part.release();
  return padded;
}

/**
 * Whether a face reaches past an edge of its tile inside the level image: the model saw only part
 * of it there, and the planner put it whole into a neighbouring tile or a later level.
 */
function cutByInnerEdge(f: RawFace, t: Tile, level: PyramidLevel): boolean {
  const { x, y, width, height } = f.box;
  return (
    (x < 0 && t.x > 0) ||
    (y < 0 && t.y > 0) ||
    (x + width > t.size && t.x + t.size < level.width) ||
    (y + height > t.size && t.y + t.size < level.height)
  );
}

/** A face of the tile at x, y of `part` in frame pixels. */
function toFrame(f: RawFace, part: LevelPart, x: number, y: number): RawFace {
  const px = (p: number) => part.frameX + (x + p) / part.scaleX;
  const py = (p: number) => part.frameY + (y + p) / part.scaleY;
  return {
    score: f.score,
    box: { x: px(f.box.x), y: py(f.box.y), width: f.box.width / part.scaleX, height: f.box.height / part.scaleY },
    keypoints: f.keypoints.map((p) => ({ x: px(p.x), y: py(p.y) })),
  };
}

function toDetection(f: RawFace): FaceDetection {
  const [rightEye, leftEye, nose, mouth, rightEar, leftEar] = f.keypoints as [Point, Point, Point, Point, Point, Point];
  const landmarks: FaceLandmarks = { rightEye, leftEye, nose, mouth, rightEar, leftEar };
  return { box: f.box, score: f.score, landmarks };
}
