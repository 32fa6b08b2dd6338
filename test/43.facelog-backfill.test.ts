// Following a newly confirmed track backwards (lib/facelog/track/backfill.ts) on the generated
// fixture videos: real decoded frames, the real detector's boxes as the track's first two
// detections, and the exact ground truth of where the face was before them.
import path from 'node:path';
import { expect } from 'chai';
import { readFrames } from '../lib/video/frame-reader.js';
import type { YuvFrame } from '../lib/video/yuv-frame.js';
import { FramePyramid } from '../lib/facelog/track/kcf.js';
import { followBackwards, MIN_BACKFILL_SCORE, MIN_BACKFILL_SCORE_DARK } from '../lib/facelog/track/backfill.js';
import { Track } from '../lib/facelog/track/track.js';
import { createBlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';
import { MODEL_DIR } from '../lib/facelog/models.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Box } from '../lib/facelog/types.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readTruth, type FacelogTruth } from '../testkit/facelog-fixtures/truth.js';

async function decodeAll(name: string): Promise<{ truth: FacelogTruth; frames: YuvFrame[] }> {
  const truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, `${name}.truth.json`));
  const frames: YuvFrame[] = [];
  for await (const f of readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height }).frames()) frames.push(f);
  return { truth, frames };
}

const truthBox = (truth: FacelogTruth, appearance: number, frame: number): Box | undefined => truth.appearances[appearance].boxes.find((b) => b.frame === frame);

describe('face log: following a new track back in time', function () {
  this.timeout(120_000);
  const detector = createBlazeFaceDetector(MODEL_DIR);

  /** A confirmed track of the face of `appearance` from the detector's boxes in frames a and b. */
  function trackOf(truth: FacelogTruth, frames: YuvFrame[], appearance: number, a: number, b: number): Track {
    const track = new Track(1);
    for (const f of [a, b]) {
      const want = truthBox(truth, appearance, f)!;
      const found = detector.detect(frames[f].bgr(), { minSize: 30 }).find((d) => iou(d.box, want) >= 0.5);
      expect(found, `the detector finds appearance ${appearance} in frame ${f}`).to.not.equal(undefined);
      track.addDetection(f, found!);
    }
    track.number = 1;
    return track;
  }

  const window = (frames: YuvFrame[], from: number, to: number) =>
    frames.slice(from, to + 1).map((frame, i) => ({ index: from + i, pyramid: () => new FramePyramid(frame) }));

  it('finds the face of a person walking towards the camera in the frames before its first detection', async () => {
    const { truth, frames } = await decodeAll('test-01-single-640x480');
    // First detections at frames 30 and 35 (face 56-65 px); frames 5-35 are still buffered.
    const track = trackOf(truth, frames, 0, 30, 35);
    const earlier = followBackwards(track, window(frames, 5, 40), { width: truth.width, height: truth.height, minWidth: 27, othersAt: () => [] });
    expect(earlier.length, 'frames followed back').to.be.at.least(20);
    expect(earlier[earlier.length - 1].frame).to.equal(29);
    // The detector's boxes are squares about 1.2 times the truth's face width (IoU ~0.75 with it
    // where it detects): every box on the face as the bench counts it (IoU >= 0.3), most well on it.
    const overlaps = earlier.map((e) => iou(e.box, truthBox(truth, 0, e.frame)!));
    for (const [i, o] of overlaps.entries()) expect(o, `frame ${earlier[i].frame}: IoU with the face`).to.be.at.least(0.3);
    expect(overlaps.reduce((a, b) => a + b) / overlaps.length, 'mean IoU').to.be.at.least(0.5);
    track.prependTracked(earlier);
    expect(track.startFrame).to.equal(earlier[0].frame);
    // One face per frame, in order, up to the second detection (the frames between detections interpolated).
    expect(track.faces.map((f) => f.frame)).to.deep.equal(Array.from({ length: track.faces.length }, (_, i) => earlier[0].frame + i));
  });

  it('stops at the frames it has, and where the face gets smaller than the least width', async () => {
    const { truth, frames } = await decodeAll('test-01-single-640x480');
    const track = trackOf(truth, frames, 0, 30, 35);
    const short = followBackwards(track, window(frames, 22, 40), { width: truth.width, height: truth.height, minWidth: 27, othersAt: () => [] });
    expect(short.map((e) => e.frame)).to.deep.equal([22, 23, 24, 25, 26, 27, 28, 29]);
    const big = followBackwards(track, window(frames, 5, 40), { width: truth.width, height: truth.height, minWidth: 45, othersAt: () => [] });
    for (const e of big) expect(e.box.width).to.be.at.least(45);
    expect(big.length).to.be.within(1, 15);
  });

  it('does not follow back a track whose first detections are weak (a false track gets no longer)', async () => {
    const { truth, frames } = await decodeAll('test-01-single-640x480');
    const sure = trackOf(truth, frames, 0, 30, 35);
    const weak = new Track(2);
    for (const d of sure.detections) weak.addDetection(d.frame, { ...d, score: MIN_BACKFILL_SCORE - 0.05 });
    weak.number = 2;
    const opts = { width: truth.width, height: truth.height, minWidth: 27, othersAt: () => [] };
    expect(followBackwards(sure, window(frames, 5, 40), opts)).to.not.be.empty;
    expect(followBackwards(weak, window(frames, 5, 40), opts)).to.be.empty;
  });

  it('follows back a dark face on weaker first detections than a lit one needs', async () => {
    // test-08 is the `dark` night: a third of the day's light, noise sigma 12.
    const { truth, frames } = await decodeAll('test-08-sequence-640x480');
    const found = trackOf(truth, frames, 0, 25, 30);
    const scored = (key: number, score: number) => {
      const t = new Track(key);
      for (const d of found.detections) t.addDetection(d.frame, { ...d, score });
      t.number = key;
      return t;
    };
    const between = (MIN_BACKFILL_SCORE + MIN_BACKFILL_SCORE_DARK) / 2;
    const opts = { width: truth.width, height: truth.height, minWidth: 27, othersAt: () => [] };
    const earlier = followBackwards(scored(2, between), window(frames, 5, 35), opts);
    expect(earlier.length, `frames followed back from a dark face scoring ${between}`).to.be.at.least(5);
    for (const e of earlier) expect(iou(e.box, truthBox(truth, 0, e.frame)!), `frame ${e.frame}: IoU with the face`).to.be.at.least(0.3);
    expect(followBackwards(scored(3, MIN_BACKFILL_SCORE_DARK - 0.02), window(frames, 5, 35), opts)).to.be.empty;
  });

  it('reads a dark face\'s growth from its first two boxes no faster than 1% a frame', async () => {
    // A dark face's detected box varies more than a lit one's: here the second box is drawn 1.3
    // times as wide, as a noisy detection scoring about 0.5 can come out. Read at up to 3% a
    // frame, that growth would shrink the face below the least width a few frames back.
    const { truth, frames } = await decodeAll('test-08-sequence-640x480');
    const found = trackOf(truth, frames, 0, 25, 30);
    const [a, b] = found.detections;
    const wide: Box = { x: b.box.x - 0.15 * b.box.width, y: b.box.y - 0.15 * b.box.height, width: 1.3 * b.box.width, height: 1.3 * b.box.height };
    const track = new Track(4);
    track.addDetection(a.frame, { ...a, score: MIN_BACKFILL_SCORE });
    track.addDetection(b.frame, { ...b, score: MIN_BACKFILL_SCORE, box: wide });
    track.number = 4;
    const opts = { width: truth.width, height: truth.height, minWidth: 27, othersAt: () => [] };
    const earlier = followBackwards(track, window(frames, 0, 35), opts);
    // The face is 32-44 px wide from the appearance's first frame (5) to frame 24: followed back
    // at up to 3% a frame, its box fell below 27 px at frame 8.
    expect(earlier[0].frame, 'first frame followed back to').to.be.at.most(truth.appearances[0].start_frame);
    for (const e of earlier.filter((x) => truthBox(truth, 0, x.frame))) {
      expect(iou(e.box, truthBox(truth, 0, e.frame)!), `frame ${e.frame}: IoU with the face`).to.be.at.least(0.3);
    }
  });

  it('stops at a frame where another track has a face on its box', async () => {
    const { truth, frames } = await decodeAll('test-01-single-640x480');
    const track = trackOf(truth, frames, 0, 30, 35);
    // As if another track had followed this face up to frame 20.
    const othersAt = (f: number) => (f <= 20 ? [truthBox(truth, 0, f)!] : []);
    const earlier = followBackwards(track, window(frames, 5, 40), { width: truth.width, height: truth.height, minWidth: 27, othersAt });
    expect(earlier.map((e) => e.frame)).to.deep.equal([21, 22, 23, 24, 25, 26, 27, 28, 29]);
  });

  it('stops where another track has the same face at another size', async () => {
    const { truth, frames } = await decodeAll('test-01-single-640x480');
    const track = trackOf(truth, frames, 0, 30, 35);
    // Another track's box twice the face's size around it (IoU with the face about 0.25).
    const twice = (b: Box): Box => ({ x: b.x - b.width / 2, y: b.y - b.height / 2, width: 2 * b.width, height: 2 * b.height });
    const othersAt = (f: number) => (f <= 20 ? [twice(truthBox(truth, 0, f)!)] : []);
    const earlier = followBackwards(track, window(frames, 5, 40), { width: truth.width, height: truth.height, minWidth: 27, othersAt });
    expect(earlier[0].frame).to.equal(21);
  });

  it('does not carry a face onto the other person where two people cross', async () => {
    const { truth, frames } = await decodeAll('test-03-crossing-1280x720');
    const track = trackOf(truth, frames, 1, 40, 45);
    const other = (f: number) => {
      const b = truthBox(truth, 0, f);
      return b ? [b] : [];
    };
    const earlier = followBackwards(track, window(frames, 10, 50), { width: truth.width, height: truth.height, minWidth: 27, othersAt: other });
    expect(earlier.length, 'frames followed back').to.be.at.least(2);
    for (const e of earlier) {
      const own = truthBox(truth, 1, e.frame);
      expect(own && iou(e.box, own), `frame ${e.frame}: on its own face`).to.be.at.least(0.3);
      for (const o of other(e.frame)) expect(iou(e.box, o), `frame ${e.frame}: not on the other face`).to.be.below(0.3);
    }
  });
});
