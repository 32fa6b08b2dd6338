// The face log's detector (BlazeFace back model, in onnxruntime and in OpenCV DNN) on real faces:
// faces of package-shipped photos, located at a comfortable scale, pasted at known widths onto
// frames of OpenCV's vtest.avi; where they are is known by construction. Every test runs for both
// runtimes, and the two must report the same faces.
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';
import { generateAnchors, MODEL_INPUT_SIZE } from '../lib/facelog/detect/anchors.js';
import { createBlazeFaceDetector, type BlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';
import { DETECTOR_RUNTIMES } from '../lib/facelog/detect/tile-runtime.js';
import { ConfigError, DEFAULT_FACE_DETECTOR_RUNTIME, faceDetectorRuntime, loadConfig } from '../lib/config.js';
import { planTiles, TILE_SIZE, MIN_FACE_MODEL_PX, MAX_FACE_MODEL_PX } from '../lib/facelog/detect/tiles.js';
import { intersection, iou } from '../lib/facelog/geometry.js';
import type { Box, FaceDetection } from '../lib/facelog/types.js';
import {
  bestMatch,
  FACE_API_SAMPLES,
  locateFaces,
  menOfFaceMatchGrid,
  MESSI,
  pasteFace,
  pasteFaces,
  vtestFrames,
  type SourceFace,
} from '../testkit/face-composites.js';
import { nightLook } from '../testkit/kamcheck-fixtures/night.js';
import { NoiseBank } from '../testkit/kamcheck-fixtures/scenes.js';
import { Prng } from '../testkit/kamcheck-fixtures/prng.js';

const MODEL_DIR = fileURLToPath(new URL('../../native-models/', import.meta.url));
/** A pasted face counts as found by a detection overlapping it this much. */
const FOUND_IOU = 0.5;
/** Widths the composites paste faces at; 30 is the smallest min_size the API allows. */
const SIZES = [30, 45, 80, 150];
/**
 * Share of pasted faces that must be found per width. With min_size 30 a 30 px face is 16 px in
 * the model, its smallest reliable face (tiles.ts): 69-88% of them were found on composites like
 * these (78%, 14 of 18, here when written); from ~34 px on 95-100%.
 */
const MIN_RECALL: Record<number, number> = { 30: 0.6, 45: 0.9, 80: 0.9, 150: 0.9 };
/**
 * The same at night (a third of the light, noise sigma 8-14), each tile lifted towards mid-grey
 * (lib/facelog/low-light.ts). Measured here when written, 54 faces per width, both runtimes alike:
 * 30 px 18, 45 px 43, 80 px 53, 150 px 54 found; without the lift 16, 36, 54 and 54. At 30 px
 * (16 px in the model) a face this dark and noisy is mostly out of reach either way.
 */
const MIN_NIGHT_RECALL: Record<number, number> = { 30: 0.25, 45: 0.75, 80: 0.95, 150: 0.95 };
/** Every face is pasted at every width this many times, each in its own night. */
const NIGHT_ROUNDS = 3;
/**
 * The two runtimes' detections of one frame, in frame pixels: the same network on the same tiles
 * (raw faces agree within 1.2e-5 model px and 6e-7 in score, test/37), scaled up to 1080p.
 */
const RUNTIME_BOX_PX = 0.05;
const RUNTIME_SCORE = 1e-4;

/** Seeded PRNG (Park-Miller) so that the planner's property test is repeatable. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

for (const runtime of DETECTOR_RUNTIMES) {
  describe(`face detector (BlazeFace, ${runtime})`, function () {
    this.timeout(180000);
    let detector: BlazeFaceDetector;
    let photos: { file: string; image: cv.Mat; detections: FaceDetection[] }[];
    let faces: SourceFace[];

    before(() => {
      detector = createBlazeFaceDetector(MODEL_DIR, { runtime });
      // Women: face-api's samples 1, 3 and 5; men: the face-match grid's first row and messi5.jpg.
      photos = [0, 2, 4].map((i) => {
        const image = cv.imread(FACE_API_SAMPLES[i]);
        return { file: FACE_API_SAMPLES[i], image, detections: detector.detect(image, { minSize: 100 }) };
      });
      const women = photos.flatMap((p) => locateFaces(detector, p.image, 100, p.file));
      const men = [...menOfFaceMatchGrid(detector).slice(0, 6), ...locateFaces(detector, cv.imread(MESSI), 30, MESSI)];
      expect(women.length, 'women located').to.be.at.least(6);
      expect(men.length, 'men located').to.be.at.least(5);
      faces = [...women, ...men];
    });

    it("generates MediaPipe's 896 back-model anchors: 16x16 cells x 2, then 8x8 cells x 6", () => {
      const anchors = generateAnchors();
      expect(anchors).to.have.length(896);
      expect(anchors[0]).to.deep.equal({ x: 8, y: 8 });
      expect(anchors[2]).to.deep.equal({ x: 24, y: 8 });
      expect(anchors[511]).to.deep.equal({ x: MODEL_INPUT_SIZE - 8, y: MODEL_INPUT_SIZE - 8 });
      expect(anchors[512]).to.deep.equal({ x: 16, y: 16 });
      expect(anchors[518]).to.deep.equal({ x: 48, y: 16 });
      expect(anchors[895]).to.deep.equal({ x: MODEL_INPUT_SIZE - 16, y: MODEL_INPUT_SIZE - 16 });
    });

    it('plans tiles that hold every face from min_size up whole, at 16-160 model pixels, also within regions', () => {
      const rnd = random(42);
      for (const [width, height] of [[320, 240], [640, 480], [1280, 720], [1920, 1080]]) {
        for (const minSize of [30, 60, 100]) {
          for (let n = 0; n < 200; n++) {
            const w = minSize + rnd() * (0.75 * Math.min(width, height) - minSize);
            const face: Box = { x: rnd() * (width - w), y: rnd() * (height - w), width: w, height: w };
            // A person's motion region around the face, clipped to the frame.
            const rx = Math.max(0, face.x - w);
            const ry = Math.max(0, face.y - w);
            const region: Box = { x: rx, y: ry, width: Math.min(width, face.x + 2 * w) - rx, height: Math.min(height, face.y + 4 * w) - ry };
            for (const regions of [undefined, [region]]) {
              const levels = planTiles(width, height, minSize, regions);
              const holding = levels.filter((l) => {
                const model = w * l.scale;
                if (model < MIN_FACE_MODEL_PX * 0.999 || model > MAX_FACE_MODEL_PX) return false;
                const [x0, y0, x1, y1] = [face.x * l.scale, face.y * l.scale, (face.x + w) * l.scale, (face.y + w) * l.scale];
                return l.tiles.some((t) => x0 >= t.x - 1 && y0 >= t.y - 1 && x1 <= t.x + t.size + 1 && y1 <= t.y + t.size + 1);
              });
              const where = `${width}x${height} min ${minSize} face ${JSON.stringify(face)} regions ${regions ? 1 : 0}`;
              expect(holding.length, where).to.be.at.least(1);
            }
          }
        }
      }
    });

    it('finds the faces of the source photos with the keypoints in place (rightEye on the image left)', () => {
      for (const { file, detections } of photos) {
        expect(detections.length, file).to.be.at.least(2);
        for (const { box, score, landmarks } of detections) {
          expect(score).to.be.within(0.5, 1);
          expect(landmarks, file).to.not.equal(undefined);
          const { rightEye, leftEye, nose, mouth } = landmarks!;
          expect(rightEye.x, `${file}: rightEye is the subject's right eye`).to.be.below(leftEye.x);
          expect(Math.max(rightEye.y, leftEye.y), `${file}: eyes above the mouth`).to.be.below(mouth.y);
          for (const p of [rightEye, leftEye, nose, mouth]) {
            expect(p.x, file).to.be.within(box.x, box.x + box.width);
            expect(p.y, file).to.be.within(box.y, box.y + box.height);
          }
        }
      }
    });

    for (const [width, height, frames] of [
      [640, 480, 0],
      [1920, 1080, 4],
    ] as const) {
      it(`finds faces pasted ${SIZES.join('/')} px wide into ${width}x${height} vtest frames (min_size 30)`, () => {
        const count = frames || faces.length;
        const backgrounds = vtestFrames([0, 150, 300, 450], width, height);
        const found: Record<number, number> = {};
        const pasted: Record<number, number> = {};
        const misses: string[] = [];
        for (let i = 0; i < count; i++) {
          const frame = backgrounds[i % backgrounds.length].copy();
          // Four faces, one of each width, a quarter of the list apart (women and men together);
          // over faces.length frames every face is pasted at every width. Shifted a little from
          // frame to frame.
          const stride = Math.floor(faces.length / SIZES.length);
          const placements = SIZES.map((size, j) => ({ face: faces[(i + j * stride) % faces.length], width: size }));
          const boxes = pasteFaces(frame, placements, ((i * 7) % 9) / 4 - 1);
          const placed = placements.map((p, j) => ({ size: p.width, face: p.face, box: boxes[j] }));
          const detections = detector.detect(frame, { minSize: 30 });
          for (const p of placed) {
            pasted[p.size] = (pasted[p.size] ?? 0) + 1;
            const m = bestMatch(detections, p.box);
            if (m.iou >= FOUND_IOU) found[p.size] = (found[p.size] ?? 0) + 1;
            else misses.push(`${p.face.name} at ${p.size} px (IoU ${m.iou.toFixed(2)})`);
          }
        }
        for (const size of SIZES) {
          expect((found[size] ?? 0) / pasted[size], `${size} px found ${found[size] ?? 0}/${pasted[size]}; missed ${misses.join(', ')}`).to.be.at.least(
            MIN_RECALL[size],
          );
        }
      });
    }

    it('finds faces at night nearly as by day: 640x480 composites at a third of the light, with the noise of gain', () => {
      // The same composites as above, then darkened as testkit/kamcheck-fixtures/night.ts's `dark`
      // look does (a third of the day's light, colour faded, noise sigma 8-14), each frame its own
      // draw, NIGHT_ROUNDS times over.
      const backgrounds = vtestFrames([0, 150, 300, 450], 640, 480);
      const noise = new NoiseBank(new Prng(17));
      const found: Record<number, number> = {};
      const pasted: Record<number, number> = {};
      const misses: string[] = [];
      for (let i = 0; i < NIGHT_ROUNDS * faces.length; i++) {
        const frame = backgrounds[i % backgrounds.length].copy();
        const stride = Math.floor(faces.length / SIZES.length);
        const placements = SIZES.map((size, j) => ({ face: faces[(i + j * stride) % faces.length], width: size }));
        const boxes = pasteFaces(frame, placements, ((i * 7) % 9) / 4 - 1);
        const rng = new Prng(100 + i);
        const look = nightLook(rng, 'dark', {});
        const dark = noise.addNoise(look.apply(frame), look.noiseSigma, rng);
        const detections = detector.detect(dark, { minSize: 30 });
        placements.forEach((p, j) => {
          pasted[p.width] = (pasted[p.width] ?? 0) + 1;
          const m = bestMatch(detections, boxes[j]);
          if (m.iou >= FOUND_IOU) found[p.width] = (found[p.width] ?? 0) + 1;
          else misses.push(`${p.face.name} at ${p.width} px (IoU ${m.iou.toFixed(2)})`);
        });
      }
      const report = `found ${SIZES.map((size) => `${size} px ${found[size] ?? 0}/${pasted[size]}`).join(', ')}; missed ${misses.join(', ')}`;
      for (const size of SIZES) expect((found[size] ?? 0) / pasted[size], report).to.be.at.least(MIN_NIGHT_RECALL[size]);
    });

    it('honours min_size: 60 finds the 100 px face, not the 30 and 45 px ones', () => {
      const [frame] = vtestFrames([100], 640, 480);
      const small = pasteFace(frame, faces[0], 30, 60, 200);
      const medium = pasteFace(frame, faces[1], 45, 200, 200);
      const large = pasteFace(frame, faces[2], 100, 380, 180);
      // Both smaller faces are found when allowed, so their absence below is min_size's doing.
      const all = detector.detect(frame, { minSize: 30 });
      expect(bestMatch(all, small).iou, '30 px with min_size 30').to.be.at.least(FOUND_IOU);
      expect(bestMatch(all, medium).iou, '45 px with min_size 30').to.be.at.least(FOUND_IOU);
      const detections = detector.detect(frame, { minSize: 60 });
      expect(bestMatch(detections, large).iou).to.be.at.least(FOUND_IOU);
      expect(bestMatch(detections, small).iou).to.be.below(0.3);
      expect(bestMatch(detections, medium).iou).to.be.below(0.3);
      for (const d of detections) expect(d.box.width).to.be.at.least(54);
    });

    it('looks only in the given regions, with fewer tiles', () => {
      const [frame] = vtestFrames([200], 1920, 1080);
      const left = pasteFace(frame, faces[3], 60, 300, 400);
      const right = pasteFace(frame, faces[4], 60, 1500, 600);
      const whole = detector.detect(frame, { minSize: 30 });
      const wholeTiles = detector.lastTileCount;
      expect(bestMatch(whole, left).iou).to.be.at.least(FOUND_IOU);
      expect(bestMatch(whole, right).iou).to.be.at.least(FOUND_IOU);
      // The region of a person around the left face: a face to each side, the body below.
      const region: Box = { x: left.x - 60, y: left.y - 60, width: 180, height: 420 };
      const detections = detector.detect(frame, { minSize: 30, regions: [region] });
      expect(detector.lastTileCount).to.be.below(wholeTiles);
      expect(bestMatch(detections, left).iou).to.be.at.least(FOUND_IOU);
      expect(bestMatch(detections, right).iou).to.equal(0);
      for (const d of detections) expect(intersection(d.box, region)).to.be.above(0);
    });

    it('looks for each tracked face with one model run, on its own level, and finds it there', () => {
      const [frame] = vtestFrames([200], 1920, 1080);
      for (const [i, width] of [40, 90, 160, 300].entries()) {
        const scene = frame.copy();
        const box = pasteFace(scene, faces[i], width, 700, 300);
        // The tracked box is one frame old: a little off.
        const tracked: Box = { x: box.x + width * 0.1, y: box.y - width * 0.05, width: width * 1.05, height: box.height * 1.05 };
        const detections = detector.detect(scene, { minSize: 30, faces: [tracked] });
        expect(detector.lastTileCount, `${width} px`).to.equal(1);
        expect(bestMatch(detections, box).iou, `${width} px`).to.be.at.least(FOUND_IOU);
        // Nothing else is looked at: a face elsewhere is not reported.
        const other = pasteFace(scene, faces[i + 4], 60, 1500, 700);
        expect(bestMatch(detector.detect(scene, { minSize: 30, faces: [tracked] }), other).iou).to.equal(0);
      }
    });

    it("keeps a tracked face's tile when a share of the whole-frame search comes along, even at a pyramid level's scale", () => {
      const [frame] = vtestFrames([200], 1920, 1080);
      const box = pasteFace(frame, faces[2], 120, 900, 500);
      // 120 px at min_size 30: the face's own scale (64 / 120) is level 0's (16 / 30).
      const tracked: Box = { x: box.x, y: box.y, width: 120, height: 120 };
      // Motion elsewhere, so that level 0 has tiles of its own too.
      const elsewhere: Box = { x: 100, y: 100, width: 60, height: 120 };
      const detections = detector.detect(frame, { minSize: 30, faces: [tracked], regions: [elsewhere], scanPart: { index: 5, of: 17 } });
      expect(bestMatch(detections, box).iou).to.be.at.least(FOUND_IOU);
    });

    it('finds a face on the border between two tiles', () => {
      const [frame] = vtestFrames([300], 1920, 1080);
      const [level0] = planTiles(1920, 1080, 30);
      // The right edge of the first tile, in frame pixels: a face centred on it is cut in that tile.
      const edge = TILE_SIZE / level0.scale;
      const boxes = [
        pasteFace(frame, faces[5], 40, edge - 20, 200),
        pasteFace(frame, faces[6], 90, edge - 45, 600),
      ];
      const detections = detector.detect(frame, { minSize: 30 });
      for (const box of boxes) expect(bestMatch(detections, box).iou, JSON.stringify(box)).to.be.at.least(FOUND_IOU);
      // One detection per face after merging the tiles.
      for (const box of boxes) expect(detections.filter((d) => iou(d.box, box) > 0.3)).to.have.length(1);
    });

    it('reports no faces on vtest frames without pasted faces (its people are smaller than min_size)', () => {
      for (const frame of vtestFrames([0, 200, 400, 600], 640, 480)) {
        expect(detector.detect(frame, { minSize: 30 })).to.deep.equal([]);
      }
      for (const frame of vtestFrames([500], 1920, 1080)) {
        expect(detector.detect(frame, { minSize: 60 })).to.deep.equal([]);
      }
    });
  });
}

describe('face detector: onnxruntime and OpenCV DNN agree', function () {
  this.timeout(180000);

  it('FACE_DETECTOR_RUNTIME names the runtime; an unknown one stops the start naming the variable', () => {
    expect(faceDetectorRuntime({})).to.equal(DEFAULT_FACE_DETECTOR_RUNTIME);
    expect(faceDetectorRuntime({ FACE_DETECTOR_RUNTIME: 'opencv' })).to.equal('opencv');
    expect(loadConfig({ FACE_DETECTOR_RUNTIME: 'onnxruntime' }).faceDetectorRuntime).to.equal('onnxruntime');
    expect(() => loadConfig({ FACE_DETECTOR_RUNTIME: 'tensorrt' })).to.throw(ConfigError, /^FACE_DETECTOR_RUNTIME: expected onnxruntime or opencv/);
  });

  it('report the same boxes, scores and keypoints on photos and on composites at 640x480 and 1080p', () => {
    const onnx = createBlazeFaceDetector(MODEL_DIR, { runtime: 'onnxruntime' });
    const opencv = createBlazeFaceDetector(MODEL_DIR, { runtime: 'opencv' });
    const faces = [0, 2].flatMap((i) => locateFaces(opencv, cv.imread(FACE_API_SAMPLES[i]), 100, FACE_API_SAMPLES[i]));
    const scenes: [string, cv.Mat, number][] = FACE_API_SAMPLES.slice(0, 3).map((file) => [file, cv.imread(file), 100]);
    for (const [width, height] of [[640, 480], [1920, 1080]]) {
      const [frame] = vtestFrames([150], width, height);
      pasteFaces(frame, SIZES.map((size, j) => ({ face: faces[j % faces.length], width: size })), 0);
      scenes.push([`${width}x${height}`, frame, 30]);
    }
    for (const [name, image, minSize] of scenes) {
      const a = opencv.detect(image, { minSize });
      const b = onnx.detect(image, { minSize });
      expect(a.length, name).to.be.at.least(1);
      expect(b.length, name).to.equal(a.length);
      expect(onnx.lastTileCount, name).to.equal(opencv.lastTileCount);
      a.forEach((d, k) => {
        expect(Math.abs(d.score - b[k].score), name).to.be.below(RUNTIME_SCORE);
        for (const key of ['x', 'y', 'width', 'height'] as const) expect(Math.abs(d.box[key] - b[k].box[key]), `${name} ${key}`).to.be.below(RUNTIME_BOX_PX);
        expect(Math.abs(d.landmarks!.nose.x - b[k].landmarks!.nose.x), name).to.be.below(RUNTIME_BOX_PX);
      });
    }
  });
});
