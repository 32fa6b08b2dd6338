// The tracker (lib/facelog/track/tracker.ts) on real decoded fixture frames: the association of a
// face that moved far between two detector runs (a person turning to leave close to the camera),
// on the video with nobody in it and detections placed by the test so that the distance is exact;
// and where a track ends, on a real face walking towards the camera and the real detector's boxes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readFrames } from '../lib/video/frame-reader.js';
import type { YuvFrame } from '../lib/video/yuv-frame.js';
import { FramePyramid } from '../lib/facelog/track/kcf.js';
import { KcfTracker } from '../lib/facelog/track/tracker.js';
import { Track } from '../lib/facelog/track/track.js';
import { FaceSpill } from '../lib/facelog/track/face-spill.js';
import { PackedFaces } from '../lib/facelog/track/packed-faces.js';
import { createBlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';
import { MODEL_DIR } from '../lib/facelog/models.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Box, FaceDetection } from '../lib/facelog/types.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readTruth, type FacelogTruth } from '../testkit/facelog-fixtures/truth.js';

const face = (x: number, y: number, width: number): FaceDetection => ({ box: { x, y, width, height: width }, score: 0.9 });
const shifted = (b: Box, dx: number, dy: number, width = b.width): FaceDetection => face(b.x + dx, b.y + dy, width);

describe('face log: tracker association of fast faces', function () {
  this.timeout(60_000);
  let frames: YuvFrame[] = [];

  before(async () => {
    const truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, 'test-06-empty-640x480.truth.json'));
    for await (const f of readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height }).frames()) {
      frames.push(f);
      if (frames.length > 20) break;
    }
  });
  after(() => {
    for (const f of frames) f.release();
    frames = [];
  });

  /** A tracker with one confirmed track (detections at frames 0 and 5 around x=100), stepped to frame 9. */
  function confirmedTrack(): KcfTracker {
    const tracker = new KcfTracker({ width: 640, height: 480, minDetections: 2, maxMisses: 4 });
    for (let i = 0; i <= 9; i++) {
      const detections = i === 0 ? [face(100, 150, 60)] : i === 5 ? [face(104, 152, 60)] : null;
      tracker.step(i, new FramePyramid(frames[i]), detections);
    }
    expect(tracker.confirmedTracks().map((t) => t.number)).to.deep.equal([1]);
    return tracker;
  }

  const last = (tracker: KcfTracker) => tracker.confirmedTracks()[0].detections.at(-1)!;

  it('continues a track with a lone face of its size three face widths away', () => {
    const tracker = confirmedTrack();
    const jump = shifted(last(tracker).box, 150, 90);
    tracker.step(10, new FramePyramid(frames[10]), [jump]);
    expect(last(tracker).frame, 'the track found its face at frame 10').to.equal(10);
    expect(last(tracker).box).to.deep.equal(jump.box);
    expect(tracker.tracks.length, 'no new track').to.equal(1);
    // The frames in between move linearly towards the detection (drift correction).
    const mid = tracker.confirmedTracks()[0].boxAt(8)!.box;
    expect(mid.x).to.be.within(104 + 150 * 0.4, 104 + 150 * 0.8);
  });

  it('does not guess between two such faces', () => {
    const tracker = confirmedTrack();
    const b = last(tracker).box;
    tracker.step(10, new FramePyramid(frames[10]), [shifted(b, 150, 90), shifted(b, -10, 170)]);
    expect(last(tracker).frame).to.equal(5);
    expect(tracker.confirmedTracks()[0].misses).to.equal(1);
    expect(tracker.tracks.length, 'two new tentative tracks').to.equal(3);
  });

  it('does not take a face much farther away or of another size', () => {
    for (const other of [(b: Box) => shifted(b, 260, 0), (b: Box) => shifted(b, 150, 0, 90)]) {
      const tracker = confirmedTrack();
      tracker.step(10, new FramePyramid(frames[10]), [other(last(tracker).box)]);
      expect(last(tracker).frame).to.equal(5);
      expect(tracker.tracks.length).to.equal(2);
    }
  });

  it('keeps a tentative track the detector was sure of through two missed runs, not a weak one', () => {
    /** A face at frame 0 scored `score`, the detector running every 5 frames, the face found again at frame 5 * (misses + 1). */
    const run = (score: number, misses: number) => {
      const tracker = new KcfTracker({ width: 640, height: 480, minDetections: 2, maxMisses: 4 });
      const back = 5 * (misses + 1);
      for (let i = 0; i <= back; i++) {
        const detections = i === 0 ? [{ ...face(100, 150, 60), score }] : i === back ? [face(102, 151, 60)] : i % 5 === 0 ? [] : null;
        tracker.step(i, new FramePyramid(frames[i]), detections);
      }
      return tracker.confirmedTracks().map((t) => t.detections.map((d) => d.frame));
    };
    expect(run(0.7, 2), 'a sure face: one track, confirmed from frame 0').to.deep.equal([[0, 15]]);
    expect(run(0.55, 2), 'a weak face: dropped, its return not yet confirmed').to.deep.equal([]);
    expect(run(0.55, 1), 'a weak face missed once').to.deep.equal([[0, 10]]);
    expect(run(0.7, 3), 'a sure face missed three times').to.deep.equal([]);
  });

  it('does not take it for a track that the previous detector run missed', () => {
    const tracker = confirmedTrack();
    tracker.step(10, new FramePyramid(frames[10]), []);
    for (let i = 11; i <= 14; i++) tracker.step(i, new FramePyramid(frames[i]), null);
    tracker.step(15, new FramePyramid(frames[15]), [shifted(last(tracker).box, 150, 90)]);
    expect(last(tracker).frame).to.equal(5);
    expect(tracker.tracks.length).to.equal(2);
  });

});

describe('face log: where a track ends', function () {
  this.timeout(60_000);
  const detector = createBlazeFaceDetector(MODEL_DIR);
  let truth: FacelogTruth;
  let frames: YuvFrame[] = [];

  before(async () => {
    truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, 'test-01-single-640x480.truth.json'));
    for await (const f of readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height }).frames()) frames.push(f);
  });
  after(() => {
    for (const f of frames) f.release();
    frames = [];
  });

  /** The walking face tracked from its detections at frames 20 and 25, then followed by KCF to frame 29. */
  function walkingFaceTrack(spill?: FaceSpill): KcfTracker {
    const tracker = new KcfTracker({ width: truth.width, height: truth.height, minDetections: 2, maxMisses: 4, spill });
    for (let i = 20; i <= 29; i++) tracker.step(i, new FramePyramid(frames[i]), i % 5 === 0 ? detector.detect(frames[i].bgr(), { minSize: 30 }) : null);
    expect(tracker.confirmedTracks().length).to.equal(1);
    return tracker;
  }
  const onFace = (tracker: KcfTracker) =>
    tracker.confirmedTracks()[0].faces.every((f) => iou(f.box, truth.appearances[0].boxes.find((b) => b.frame === f.frame)!) >= 0.3);

  it('cuts a lost track at the first detector run that missed its face, keeping KCF\'s frames before that run', () => {
    const tracker = walkingFaceTrack();
    // The detector "misses" the face from frame 30 on: the track ends after 4 such runs.
    for (let i = 30; i <= 45; i++) tracker.step(i, new FramePyramid(frames[i]), i % 5 === 0 ? [] : null);
    const track = tracker.confirmedTracks()[0];
    expect(track.ended).to.equal(true);
    expect(track.faces.map((f) => f.frame)).to.deep.equal([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    expect(onFace(tracker), 'every box on the face').to.equal(true);
  });

  it('keeps the followed frames after the last detection at the end of the video', () => {
    const tracker = walkingFaceTrack();
    tracker.finish();
    expect(tracker.confirmedTracks()[0].endFrame).to.equal(29);
    expect(onFace(tracker), 'every box on the face').to.equal(true);
    // Ended, the track is packed (see the next tests): it takes no more faces.
    expect(() => tracker.confirmedTracks()[0].addTracked(30, tracker.confirmedTracks()[0].lastBox)).to.throw(/packed/);
  });

  it("puts an ended track's face records in the job's spill file, and reads the same back", () => {
    const inMemory = walkingFaceTrack();
    inMemory.finish();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'face-spill-'));
    const spill = new FaceSpill(path.join(dir, 'faces.spill'));
    try {
      const spilled = walkingFaceTrack(spill);
      expect(spill.bytes).to.equal(0);
      spilled.finish();
      const [a, b] = [inMemory.confirmedTracks()[0], spilled.confirmedTracks()[0]];
      expect(b.faceCount).to.equal(10);
      // 41 bytes a face on disk; the frame numbers stay in memory.
      expect(spill.bytes).to.equal(41 * b.faceCount);
      expect(fs.statSync(spill.file).size).to.equal(spill.bytes);
      expect(b.faces).to.deep.equal(a.faces);
      expect(Array.from({ length: 40 }, (_, f) => b.boxAt(f))).to.deep.equal(Array.from({ length: 40 }, (_, f) => a.boxAt(f)));
    } finally {
      spill.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('face log: packed face records', () => {
  const face = (frame: number, x: number) => ({ frame, box: { x, y: 2.5, width: 30.125, height: 31 }, confidence: 0.75, detected: frame % 2 === 0 });

  it('finds a record by its frame, whether the frames run on one a frame or skip', () => {
    for (const frames of [[4, 5, 6, 7], [3, 5, 6, 9]]) {
      const faces = frames.map((f, i) => face(f, 10 * i + 0.5));
      const packed = new PackedFaces(faces);
      expect(packed.all()).to.deep.equal(faces);
      const found = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => packed.indexOf(from + k));
      expect(found(2, 10)).to.deep.equal(Array.from({ length: 9 }, (_, k) => frames.indexOf(2 + k)));
      packed.shiftFrames(100);
      expect(packed.all()).to.deep.equal(faces.map((f) => ({ ...f, frame: f.frame + 100 })));
      expect(found(102, 110)).to.deep.equal(Array.from({ length: 9 }, (_, k) => frames.indexOf(2 + k)));
    }
  });
});

describe('face log: an ended track packed', () => {
  // What a finished track keeps to the end of a job is packed (track/packed-faces.ts), and nothing
  // about it may change but its size.
  it('answers the same records, boxes and frames, sums up its detections, and takes no new faces', () => {
    const landmarks = { rightEye: { x: 1, y: 2 }, leftEye: { x: 3, y: 4 }, nose: { x: 5, y: 6 }, mouth: { x: 7, y: 8 }, rightEar: { x: 0, y: 1 }, leftEar: { x: 9, y: 1 } };
    const track = new Track(1);
    track.number = 7;
    track.addDetection(10, { box: { x: 100.25, y: 50.5, width: 40.125, height: 41 }, score: 0.8125, landmarks });
    for (let f = 11; f < 14; f++) track.addTracked(f, { x: 100 + f / 3, y: 50 + f / 7, width: 40, height: 41 });
    // frame 14 has no box: the next detection's gap is filled in
    track.addDetection(15, { box: { x: 103.5, y: 52, width: 42, height: 43 }, score: 0.9, landmarks }, { x: 103, y: 51, width: 41, height: 41 });
    track.prependTracked([{ frame: 8, box: { x: 99, y: 50, width: 40, height: 40 } }, { frame: 9, box: { x: 99.5, y: 50, width: 40, height: 40 } }]);
    const faces = structuredClone(track.faces);
    const boxes = Array.from({ length: 20 }, (_, f) => track.boxAt(f));
    const summary = { start: track.startFrame, end: track.endFrame, first: track.faceAt(0).box, last: track.lastBox, count: track.faceCount };
    const detected = { count: track.detectionCount, best: track.bestScores(), viewed: track.viewedDetections() };
    expect(detected).to.deep.equal({ count: 2, best: [0.9, 0.8125], viewed: [] });
    expect({ start: track.startFrame, detected: track.firstDetectedFrame }, 'followed back from its first detection').to.deep.equal({ start: 8, detected: 10 });

    track.pack();
    expect(track.faces).to.deep.equal(faces);
    expect(Array.from({ length: 20 }, (_, f) => track.boxAt(f))).to.deep.equal(boxes);
    expect({ start: track.startFrame, end: track.endFrame, first: track.faceAt(0).box, last: track.lastBox, count: track.faceCount }).to.deep.equal(summary);
    expect(summary.count).to.equal(8);
    // Its detections go, landmarks and all; their count and best scores stay.
    expect(track.detections).to.deep.equal([]);
    expect({ count: track.detectionCount, best: track.bestScores(), viewed: track.viewedDetections() }).to.deep.equal(detected);
    expect(() => track.addTracked(16, summary.last)).to.throw(/packed/);

    expect(track.firstDetectedFrame).to.equal(10);
    track.shiftFrames(100);
    expect(track.faces).to.deep.equal(faces.map((f) => ({ ...f, frame: f.frame + 100 })));
    expect(track.firstDetectedFrame).to.equal(110);
    expect(faces[2].frame).to.equal(10);
    expect(track.boxAt(110)).to.deep.equal({ ...faces[2], frame: 110 });
  });
});
