// The tracker's association of a face that moved far between two detector runs (a person turning
// to leave close to the camera): lib/facelog/track/tracker.ts on real decoded frames of the
// fixture video with nobody in it (KCF follows whatever is there), with detections placed by the
// test so that the distance between runs is exact.
import path from 'node:path';
import { expect } from 'chai';
import { readFrames } from '../lib/video/frame-reader.js';
import type { YuvFrame } from '../lib/video/yuv-frame.js';
import { FramePyramid } from '../lib/facelog/track/kcf.js';
import { FaceTracker } from '../lib/facelog/track/tracker.js';
import type { Box, FaceDetection } from '../lib/facelog/types.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readTruth } from '../scripts/facelog-fixtures/truth.js';

const face = (x: number, y: number, width: number): FaceDetection => ({ box: { x, y, width, height: width }, score: 0.9 });
const shifted = (b: Box, dx: number, dy: number, width = b.width): FaceDetection => face(b.x + dx, b.y + dy, width);

describe('face log: tracker association of fast faces', function () {
  this.timeout(60_000);
  let frames: YuvFrame[] = [];

  before(async () => {
    const truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, 'test-06-empty-640x480.truth.json'));
    for await (const f of readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height }).frames()) {
      frames.push(f);
      if (frames.length > 15) break;
    }
  });
  after(() => {
    for (const f of frames) f.release();
    frames = [];
  });

  /** A tracker with one confirmed track (detections at frames 0 and 5 around x=100), stepped to frame 9. */
  function confirmedTrack(): FaceTracker {
    const tracker = new FaceTracker({ width: 640, height: 480, minDetections: 2, maxMisses: 4 });
    for (let i = 0; i <= 9; i++) {
      const detections = i === 0 ? [face(100, 150, 60)] : i === 5 ? [face(104, 152, 60)] : null;
      tracker.step(i, new FramePyramid(frames[i]), detections);
    }
    expect(tracker.confirmedTracks().map((t) => t.number)).to.deep.equal([1]);
    return tracker;
  }

  const last = (tracker: FaceTracker) => tracker.confirmedTracks()[0].detections.at(-1)!;

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

  it('does not take it for a track that the previous detector run missed', () => {
    const tracker = confirmedTrack();
    tracker.step(10, new FramePyramid(frames[10]), []);
    for (let i = 11; i <= 14; i++) tracker.step(i, new FramePyramid(frames[i]), null);
    tracker.step(15, new FramePyramid(frames[15]), [shifted(last(tracker).box, 150, 90)]);
    expect(last(tracker).frame).to.equal(5);
    expect(tracker.tracks.length).to.equal(2);
  });
});
