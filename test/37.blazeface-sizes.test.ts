// BlazeFace as the detector runs it: the package's ONNX rewritten for NCHW inputs of 128, 192 and
// 256 px (testkit/models/rewrite-blazeface.ts), checked against the package model on real faces,
// the rewrites widened for onnxruntime (testkit/models/widen-blazeface.ts) against them, and the
// tile planner's use of them (small tiles around small regions and tracked faces).
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';
import { loadTileModel, type TileModel } from '../lib/facelog/detect/blazeface.js';
import { blazeFaceModelFile, blazeFaceWideModelFile, MODEL_INPUT_SIZE, MODEL_SIZES } from '../lib/facelog/detect/model-sizes.js';
import { loadOnnxNet } from '../lib/facelog/onnxruntime-session.js';
import { BLAZEFACE_OUTPUTS, decodeOutputs, DETECTOR_RUNTIMES, inputBlob, MIN_SCORE, type DetectorRuntime } from '../lib/facelog/detect/tile-runtime.js';
import { LOST_FACE_MARGIN, planTiles, TRACKED_FACE_MARGIN } from '../lib/facelog/detect/tiles.js';
import type { RawFace } from '../lib/facelog/detect/decode.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Box } from '../lib/facelog/types.js';
import { readFields, writeFields } from '../testkit/models/proto-fields.js';
import { rewriteBlazeFace } from '../testkit/models/rewrite-blazeface.js';
import { BLAZEFACE_FILE } from '../testkit/models/blazeface.js';
import { generateAnchors } from '../lib/facelog/detect/anchors.js';
import { decodeFaces, REGRESSOR_VALUES } from '../lib/facelog/detect/decode.js';
import { FACE_API_SAMPLES, locateFaces, menOfFaceMatchGrid, pasteFace, vtestFrames, type SourceFace } from '../testkit/face-composites.js';
import { createBlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';

const MODEL_DIR = path.resolve('native-models');
const PACKAGE_MODEL = path.join(MODEL_DIR, BLAZEFACE_FILE);
/**
 * A face in the middle of a small tile against the same face in the middle of a 256 tile of the
 * same picture: the network is the same, only what lies beyond the small tile's edge differs.
 * Measured on 12 faces at 48 px: IoU 0.93-0.98 and scores 0.006-0.025 apart at 128 px, IoU
 * 0.98-1.00 and scores within 0.002 at 192 px.
 */
const SAME_FACE_IOU = 0.85;
const SAME_FACE_SCORE = 0.1;
/**
 * onnxruntime (the widened files) against OpenCV DNN on the same tile: the same network and input,
 * different kernels and float summation order. Measured on these 12 faces at 48 px, 156 raw faces
 * over the three tile sides: boxes within 1.2e-5 px, scores within 6e-7 (narrow files in both).
 */
const RUNTIME_BOX_PX = 0.01;
const RUNTIME_SCORE = 1e-4;

/**
 * The widened files' raw outputs (logits and box regressors, in model pixels) against the narrow
 * ones', both in onnxruntime: the same values up to float rounding. Measured on a vtest.avi tile
 * with a pasted face: at most 3e-5 apart.
 */
const WIDENED_OUTPUT_TOLERANCE = 1e-3;

/**
 * The package model as MediaPipe runs it: NHWC input, RGB scaled to [-1, 1] (the reference for the
 * rewrites; its input is filled through a 2-d view, as n-dimensional Mats take no data directly).
 */
function packageModel(minScore: number): (tile: cv.Mat) => RawFace[] {
  const net = cv.readNetFromONNX(PACKAGE_MODEL);
  const input = new cv.Mat([1, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, 3], cv.CV_32F);
  const view = input.flattenFloat(MODEL_INPUT_SIZE, MODEL_INPUT_SIZE * 3);
  const anchors = generateAnchors(MODEL_INPUT_SIZE);
  const floats = (m: cv.Mat, rows: number, cols: number) => new Float32Array(Uint8Array.from(m.flattenFloat(rows, cols).getData()).buffer);
  return (tile) => {
    view.setData(tile.cvtColor(cv.COLOR_BGR2RGB).convertTo(cv.CV_32FC3, 1 / 127.5, -1).getData());
    net.setInput(input);
    const [l16, l32, b16, b32] = net.forward(BLAZEFACE_OUTPUTS);
    const logits = Float32Array.from([...floats(l16, 1, 512), ...floats(l32, 1, 384)]);
    const regressors = Float32Array.from([...floats(b16, 512, REGRESSOR_VALUES), ...floats(b32, 384, REGRESSOR_VALUES)]);
    return decodeFaces(logits, regressors, anchors, minScore);
  };
}

function best(faces: RawFace[], box: Box): RawFace | undefined {
  return faces.filter((f) => iou(f.box, box) > 0.3).sort((a, b) => b.score - a.score)[0];
}

function shift(b: Box, dx: number, dy: number): Box {
  return { ...b, x: b.x + dx, y: b.y + dy };
}

describe('BlazeFace rewritten for NCHW tiles of 128, 192 and 256 px', function () {
  this.timeout(120000);
  let faces: SourceFace[];
  let models: Map<DetectorRuntime, Map<number, TileModel>>;

  before(() => {
    const detector = createBlazeFaceDetector(MODEL_DIR);
    const women = [0, 2].flatMap((i) => locateFaces(detector, cv.imread(FACE_API_SAMPLES[i]), 100, FACE_API_SAMPLES[i]));
    faces = [...women, ...menOfFaceMatchGrid(detector).slice(0, 6)];
    expect(faces.length).to.be.at.least(8);
    models = new Map(DETECTOR_RUNTIMES.map((runtime) => [runtime, new Map(MODEL_SIZES.map((size) => [size, loadTileModel(MODEL_DIR, size, undefined, runtime)]))]));
  });

  it('reads and writes the model protobuf back byte for byte', () => {
    const bytes = new Uint8Array(readFileSync(PACKAGE_MODEL));
    expect(Buffer.from(writeFields(readFields(bytes))).equals(Buffer.from(bytes))).to.equal(true);
  });

  for (const runtime of DETECTOR_RUNTIMES) {
    it(`the 256 px rewrite gives the package model’s faces (NCHW input instead of NHWC), in ${runtime}`, () => {
      const rewritten = loadTileModel(MODEL_DIR, 256, 0.3, runtime);
      const original = packageModel(0.3);
      const [frame] = vtestFrames([120], 640, 480);
      for (const [i, face] of faces.slice(0, 4).entries()) {
        const scene = frame.copy();
        pasteFace(scene, face, 40 + 20 * i, 60 + 30 * i, 50);
        const tile = scene.getRegion(new cv.Rect(0, 0, 256, 256));
        const a = original(tile);
        const b = rewritten(tile);
        expect(a.length).to.be.at.least(1);
        // The same network on the same pixels; only the float rounding of the input's scaling differs.
        expect(b.length).to.equal(a.length);
        a.forEach((f, k) => {
          expect(Math.abs(f.score - b[k].score)).to.be.below(1e-4);
          for (const key of ['x', 'y', 'width', 'height'] as const) expect(Math.abs(f.box[key] - b[k].box[key])).to.be.below(0.01);
        });
      }
    });
  }

  it('refuses sides that are not a multiple of 32 and graphs that are not BlazeFace', () => {
    const model = readFileSync(PACKAGE_MODEL);
    expect(() => rewriteBlazeFace(model, 100)).to.throw(/multiple of 32/);
    expect(() => rewriteBlazeFace(readFileSync(path.join(MODEL_DIR, 'gender.onnx')), 128)).to.throw(/not the BlazeFace back model/);
  });

  for (const runtime of DETECTOR_RUNTIMES) {
    it(`finds the same faces at 128 and 192 px as at 256 px in the middle of a tile, in ${runtime}`, () => {
        const sized = models.get(runtime)!;
      const [frame] = vtestFrames([300], 640, 480);
      for (const face of faces) {
        const scene = frame.copy();
        // A 48 px face in the middle of the 256 square at (100, 60).
        const box = pasteFace(scene, face, 48, 100 + 128 - 24, 60 + 128 - 28);
        const whole = best(sized.get(256)!(scene.getRegion(new cv.Rect(100, 60, 256, 256))), shift(box, -100, -60));
        expect(whole, face.name).to.not.equal(undefined);
        for (const size of [128, 192]) {
          const off = (256 - size) / 2;
          const small = best(sized.get(size)!(scene.getRegion(new cv.Rect(100 + off, 60 + off, size, size))), shift(box, -100 - off, -60 - off));
          expect(small, `${face.name} at ${size}`).to.not.equal(undefined);
          expect(iou(shift(small!.box, off, off), whole!.box), `${face.name} at ${size}`).to.be.at.least(SAME_FACE_IOU);
          expect(Math.abs(small!.score - whole!.score), `${face.name} at ${size}`).to.be.at.most(SAME_FACE_SCORE);
        }
      }
    });
  }

  it('onnxruntime and OpenCV DNN find the same raw faces in the same tile, at every tile side', () => {
    const [frame] = vtestFrames([300], 640, 480);
    for (const face of faces) {
      const scene = frame.copy();
      pasteFace(scene, face, 48, 100 + 128 - 24, 60 + 128 - 28);
      for (const size of MODEL_SIZES) {
        const off = (256 - size) / 2;
        const tile = scene.getRegion(new cv.Rect(100 + off, 60 + off, size, size));
        const a = models.get('opencv')!.get(size)!(tile);
        const b = models.get('onnxruntime')!.get(size)!(tile);
        const where = `${face.name} at ${size}`;
        expect(a.length, where).to.be.at.least(1);
        expect(b.length, where).to.equal(a.length);
        a.forEach((f, k) => {
          expect(Math.abs(f.score - b[k].score), where).to.be.below(RUNTIME_SCORE);
          for (const key of ['x', 'y', 'width', 'height'] as const) expect(Math.abs(f.box[key] - b[k].box[key]), where).to.be.below(RUNTIME_BOX_PX);
        });
      }
    }
  });

  it('the widened files give the narrow files\' outputs in onnxruntime', () => {
    const [frame] = vtestFrames([300], 640, 480);
    pasteFace(frame, faces[0], 48, 100 + 128 - 24, 60 + 128 - 28);
    for (const size of MODEL_SIZES) {
      const narrow = loadOnnxNet(path.join(MODEL_DIR, blazeFaceModelFile(size)));
      const wide = loadOnnxNet(path.join(MODEL_DIR, blazeFaceWideModelFile(size)));
      const off = (256 - size) / 2;
      const input = inputBlob(frame.getRegion(new cv.Rect(100 + off, 60 + off, size, size)), size);
      const a = narrow.run(input, BLAZEFACE_OUTPUTS);
      const b = wide.run(input, BLAZEFACE_OUTPUTS);
      let worst = 0;
      a.forEach((values, k) => {
        expect(b[k].length, `${BLAZEFACE_OUTPUTS[k]} at ${size}`).to.equal(values.length);
        values.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - b[k][i]))));
      });
      expect(worst, `at ${size}`).to.be.below(WIDENED_OUTPUT_TOLERANCE);
      // The face is found, and the same (not all-zero outputs agreeing by accident).
      const anchors = generateAnchors(size);
      const found = decodeOutputs(b, anchors, MIN_SCORE);
      expect(found.length, `faces at ${size}`).to.be.at.least(1);
    }
  });

  it('prepare-models recorded the rewrites and their widened files with their SHA-256', () => {
    const manifest = JSON.parse(readFileSync(path.join(MODEL_DIR, 'manifest.json'), 'utf8')) as { models: { file: string; sha256: string }[] };
    for (const file of MODEL_SIZES.flatMap((size) => [blazeFaceModelFile(size), blazeFaceWideModelFile(size)])) {
      const entry = manifest.models.find((m) => m.file === file);
      expect(entry, file).to.not.equal(undefined);
      expect(entry!.sha256).to.equal(createHash('sha256').update(readFileSync(path.join(MODEL_DIR, file))).digest('hex'));
    }
  });
});

describe('tile planner: tile sizes', () => {
  const face: Box = { x: 600, y: 300, width: 60, height: 70 };
  /** The frame rectangle a tile of a level covers. */
  const covered = (scale: number, t: { x: number; y: number; size: number }): Box => ({ x: t.x / scale, y: t.y / scale, width: t.size / scale, height: t.size / scale });
  const holds = (outer: Box, inner: Box) =>
    inner.x >= outer.x - 1 && inner.y >= outer.y - 1 && inner.x + inner.width <= outer.x + outer.width + 1 && inner.y + inner.height <= outer.y + outer.height + 1;

  it('looks for a steady tracked face in one 128 tile that holds its margins', () => {
    const levels = planTiles(1280, 720, 30, [], [face]);
    expect(levels).to.have.length(1);
    const [{ scale, tiles }] = levels;
    expect(tiles).to.have.length(1);
    expect(tiles[0].size).to.equal(128);
    const m = TRACKED_FACE_MARGIN * face.width;
    expect(holds(covered(scale, tiles[0]), { x: face.x - m, y: face.y - m, width: face.width + 2 * m, height: face.height + 2 * m })).to.equal(true);
  });

  it('looks further around a lost face, and where a moving face is headed', () => {
    const [lost] = planTiles(1280, 720, 30, [], [{ ...face, lost: true }]);
    expect(lost.tiles[0].size).to.equal(256);
    const m = LOST_FACE_MARGIN * face.width;
    expect(holds(covered(lost.scale, lost.tiles[0]), { x: face.x - m, y: face.y - m, width: face.width + 2 * m, height: face.height + 2 * m })).to.equal(true);

    const moving = { ...face, x: face.x + 90, y: face.y + 40 };
    const [level] = planTiles(1280, 720, 30, [], [{ ...face, moving }]);
    expect(level.tiles[0].size).to.be.above(128);
    expect(holds(covered(level.scale, level.tiles[0]), face)).to.equal(true);
    expect(holds(covered(level.scale, level.tiles[0]), moving)).to.equal(true);
  });

  it('gives a small motion region a small tile, and a large one 256 tiles', () => {
    const small = planTiles(1280, 720, 30, [{ x: 400, y: 200, width: 60, height: 90 }]);
    expect(small[0].tiles.map((t) => t.size)).to.deep.equal([128]);
    const large = planTiles(1280, 720, 30, [{ x: 100, y: 100, width: 500, height: 400 }]);
    expect(large[0].tiles.every((t) => t.size === 256)).to.equal(true);
  });
});
