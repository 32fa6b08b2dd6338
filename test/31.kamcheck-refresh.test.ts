// The worker's side of camera references, on real decoded video: the quietest frame of a clip,
// the refresh of a reference (the scene without its passers-by, written only under the probability
// asked and only when asked), the reference
// cache (a reference replaced on disk is read again), and clips whose container does not give
// their frame count.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { kamcheckAnalytic } from '../lib/kamcheck/analytic.js';
import { workingSize } from '../lib/kamcheck/cells.js';
import { readWorkingClip } from '../lib/kamcheck/clip.js';
import { clearReferenceCache } from '../lib/kamcheck/reference.js';
import { quietestFrame } from '../lib/kamcheck/refresh.js';
import { runKamcheck } from '../lib/kamcheck/run.js';
import { InvalidJobInputError } from '../lib/jobs/input-fields.js';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import cv from '../lib/video/opencv.js';
import { makeQuietClip, type QuietClip } from '../testkit/quiet-clip.js';

/** Mean absolute difference per channel value of two pictures of one size. */
function meanDifference(a: cv.Mat, b: cv.Mat): number {
  const sum = a.absdiff(b).sum() as unknown as { x: number; y: number; z: number };
  return (sum.x + sum.y + sum.z) / (a.rows * a.cols * 3);
}

function workingGrays(clip: string) {
  return readWorkingClip(clip, { maxFrames: 25, sizeFor: (w, h) => workingSize(w, h) }).working.map((w) => w.gray);
}

describe('kamcheck reference refresh', function () {
  this.timeout(120_000);
  let tmp: string;
  let quiet9: QuietClip;
  let quiet25: QuietClip;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kamcheck-refresh-'));
    quiet9 = makeQuietClip(path.join(tmp, 'q9'), { count: 9, quiet: 5 });
    // frame 12 of 25 is one of the 9 spread frames the analysis reads
    quiet25 = makeQuietClip(path.join(tmp, 'q25'), { count: 25, quiet: 12 });
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  beforeEach(() => clearReferenceCache());

  it('picks the frame without pedestrians as the quietest of a vtest.avi clip', () => {
    expect(quietestFrame(workingGrays(quiet9.clip))).to.equal(5);
    // of 25 frames the spread ones are read: frames 0, 3, 6, 9, 12, ... ; the empty one is the 5th
    expect(quietestFrame(workingGrays(quiet25.clip))).to.equal(4);
    // the same frames with the empty scene first, then last
    const first = makeQuietClip(path.join(tmp, 'q-first'), { count: 9, quiet: 0 });
    expect(quietestFrame(workingGrays(first.clip))).to.equal(0);
    const last = makeQuietClip(path.join(tmp, 'q-last'), { count: 9, quiet: 8 });
    expect(quietestFrame(workingGrays(last.clip))).to.equal(8);
  });

  it('writes the scene without its passers-by at full size as a JPEG when the probability is 0, and leaves the reference alone', async () => {
    // laid out as a data file is (<DATA_DIR>/<folder>/<2 hex>/<name>): its thumbnail goes beside, under tmp
    const refreshPath = path.join(tmp, 'references', 'a0', 'refresh-a.jpg');
    const referenceBytes = fs.readFileSync(quiet25.background);
    const referenceMtime = fs.statSync(quiet25.background).mtimeMs;
    const r = await runKamcheck({ videoPath: quiet25.clip, imagePath: quiet25.background, refreshPath }, () => undefined);
    expect(r.probability, JSON.stringify(r)).to.equal(0);
    expect(r.renewedReference, 'reported to the job').to.equal(true);

    const written = readImage(refreshPath);
    expect([written.cols, written.rows]).to.deep.equal([640, 480]);
    // it is the empty scene (after H.264 and JPEG), nearest the clip's empty frame of all its frames
    const differences = quiet25.frames.map((f) => meanDifference(written, f));
    expect(differences.indexOf(Math.min(...differences))).to.equal(quiet25.quiet);
    expect(differences[quiet25.quiet!]).to.be.below(3);
    expect(fs.existsSync(`${refreshPath}.tmp`)).to.equal(false);
    expect(readImage(path.join(tmp, 'thumbnails', 'references', 'a0', 'refresh-a.jpg')).cols, "the camera list's small copy").to.equal(320);

    expect(fs.readFileSync(quiet25.background).equals(referenceBytes)).to.equal(true);
    expect(fs.statSync(quiet25.background).mtimeMs).to.equal(referenceMtime);
  });

  it('renews from a clip with passers-by in every frame a picture without them', async () => {
    // frames 250-346 of vtest.avi, 4 apart: pedestrians in every frame
    const busy = makeQuietClip(path.join(tmp, 'busy'), { count: 25, quiet: null });
    const refreshPath = path.join(tmp, 'references', 'c0', 'refresh-c.jpg');
    const r = await runKamcheck({ videoPath: busy.clip, imagePath: busy.background, refreshPath }, () => undefined);
    expect(r.probability).to.equal(0);
    expect(r.renewedReference).to.equal(true);
    // The per-pixel median of the spread frames is the empty scene: nearer to it than any one frame,
    // the quietest included, which a renewal from a single frame would have written.
    const written = readImage(refreshPath);
    const empty = readImage(busy.background);
    const frameDistances = busy.frames.map((f) => meanDifference(f, empty));
    expect(meanDifference(written, empty)).to.be.below(0.75 * Math.min(...frameDistances));
  });

  it('replaces an existing refresh file', async () => {
    const refreshPath = path.join(tmp, 'references', 'b0', 'refresh-b.jpg');
    fs.mkdirSync(path.dirname(refreshPath), { recursive: true });
    fs.writeFileSync(refreshPath, 'an older picture');
    await runKamcheck({ videoPath: quiet9.clip, imagePath: quiet9.background, refreshPath }, () => undefined);
    expect(readImage(refreshPath).cols).to.equal(640);
  });

  it('writes nothing when the probability is above 0, or when no refresh is asked', async () => {
    const dir = path.join(tmp, 'none');
    fs.mkdirSync(dir);
    // the clip against a black reference: exposure (and more) is far from 0
    const black = path.join(dir, 'black.jpg');
    cv.imwrite(black, new cv.Mat(480, 640, cv.CV_8UC3, [0, 0, 0]));
    const refreshPath = path.join(dir, 'refresh.jpg');
    const tampered = await runKamcheck({ videoPath: quiet9.clip, imagePath: black, refreshPath }, () => undefined);
    expect(tampered.probability).to.be.above(0);
    expect(tampered.renewedReference).to.equal(false);
    expect(fs.readdirSync(dir)).to.deep.equal(['black.jpg']);

    const healthy = await runKamcheck({ videoPath: quiet9.clip, imagePath: quiet9.background }, () => undefined);
    expect(healthy.probability).to.equal(0);
    expect(healthy.renewedReference).to.equal(false);
    expect(fs.readdirSync(dir)).to.deep.equal(['black.jpg']);
  });

  it('reads a reference again once another picture was renamed over it', async () => {
    const reference = path.join(tmp, 'camera-reference.jpg');
    fs.copyFileSync(quiet9.background, reference);
    const healthy = await runKamcheck({ videoPath: quiet9.clip, imagePath: reference }, () => undefined);
    expect(healthy.probability).to.equal(0);
    const black = path.join(tmp, 'black-new.jpg');
    cv.imwrite(black, new cv.Mat(480, 640, cv.CV_8UC3, [0, 0, 0]));
    fs.renameSync(black, reference);
    const after = await runKamcheck({ videoPath: quiet9.clip, imagePath: reference }, () => undefined);
    expect(after.probability).to.be.at.least(50);
  });

  it('analyses clips whose container gives no frame count, or a wrong one, like all their decoded frames', async () => {
    // a raw H.264 stream has no count; frames at irregular times make the count estimated from the
    // duration wrong (15 for these 25 frames): both are read again with the decoded count
    const raw = path.join(tmp, 'quiet.h264');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', quiet25.clip, '-c', 'copy', '-f', 'h264', raw]);
    const irregular = path.join(tmp, 'irregular.mkv');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', quiet25.clip, '-vf', 'setpts=N*N/400/TB', '-fps_mode', 'passthrough', '-c:v', 'libx264', irregular]);
    for (const clip of [raw, irregular]) {
      const r = await runKamcheck({ videoPath: clip, imagePath: quiet25.background }, () => undefined);
      const decoded = readVideoFrames(clip);
      expect(decoded.frames).to.have.length(25);
      const { renewedReference: _renewed, learnedReference: _learned, ...analysis } = r;
      expect(analysis, clip).to.deep.equal(analyseTamper(decoded.frames, readImage(quiet25.background)));
    }
  });
});

describe('kamcheck learning a reference', () => {
  it('without a reference, writes the clip\'s quietest frame, checks the clip against it, and leaves the last frame as the picture', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kamcheck-learn-'));
    try {
      const quiet9 = makeQuietClip(path.join(tmp, 'q9'), { count: 9, quiet: 5 });
      // data files' layout (<DATA_DIR>/<folder>/<2 hex>/<name>): their thumbnails go under tmp/data
      const learnPath = path.join(tmp, 'data', 'references', 'a0', 'reference.jpg');
      const picturePath = path.join(tmp, 'data', 'captures', 'b0', 'last.jpg');
      const r = await runKamcheck({ videoPath: quiet9.clip, learnPath, picturePath, refreshPath: path.join(tmp, 'never.jpg') }, () => undefined);
      expect(r).to.include({ learnedReference: true, renewedReference: false });
      expect(r.probability).to.be.below(50);
      const decoded = readVideoFrames(quiet9.clip);
      const learned = readImage(learnPath);
      expect([learned.cols, learned.rows]).to.deep.equal([decoded.frames[0].cols, decoded.frames[0].rows]);
      // The same check against the learned picture as an upload of it gives the same answer.
      const again = await runKamcheck({ videoPath: quiet9.clip, imagePath: learnPath }, () => undefined);
      expect(again.probability).to.equal(r.probability);
      const picture = readImage(picturePath);
      const last = decoded.frames[decoded.frames.length - 1];
      expect(picture.absdiff(last).mean().w + picture.absdiff(last).mean().x + picture.absdiff(last).mean().y).to.be.below(6);
      expect(fs.existsSync(path.join(tmp, 'never.jpg')), 'a learned reference is not renewed by the same check').to.equal(false);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('kamcheck job input', () => {
  const base = { videoPath: '/v', imagePath: '/i', videoName: 'v.mp4', imageName: 'i.png' };

  it('reads records without refreshPath (stored before cameras) and with one', () => {
    expect(kamcheckAnalytic.parseInput(base)).to.deep.equal(base);
    expect(kamcheckAnalytic.parseInput({ ...base, refreshPath: '/r.jpg' })).to.deep.equal({ ...base, refreshPath: '/r.jpg' });
  });

  it('refuses a refreshPath that is not a path', () => {
    expect(() => kamcheckAnalytic.parseInput({ ...base, refreshPath: 7 })).to.throw(InvalidJobInputError);
    expect(() => kamcheckAnalytic.parseInput({ ...base, refreshPath: '' })).to.throw(InvalidJobInputError);
  });

  it('reads the probability under which a check renews, a whole number from 1 to 100, and refuses others', () => {
    const renewing = { ...base, refreshPath: '/r.jpg', refreshBelow: 10 };
    expect(kamcheckAnalytic.parseInput(renewing)).to.deep.equal(renewing);
    for (const bad of [0, 101, 2.5, '10', null]) {
      expect(() => kamcheckAnalytic.parseInput({ ...renewing, refreshBelow: bad }), String(bad)).to.throw(InvalidJobInputError, 'refreshBelow');
    }
  });

  it("reads a check's second opinion (the older reference, the id to set aside, the camera's line), and refuses a malformed one", () => {
    const reference = { slot: '11:00-12:00', captured_at: 'Wed, 25 Nov 2026 10:00:00 GMT', source_job: null };
    const asking = { ...base, secondOpinion: { imagePath: '/o.jpg', reference, setAside: 'r-1', from: 35 } };
    expect(kamcheckAnalytic.parseInput(asking)).to.deep.equal(asking);
    for (const bad of [{ from: 0 }, { from: 50.5 }, { from: '50' }, { setAside: 7 }, { imagePath: null }, { reference: null }, { reference: [] }]) {
      const input = { ...base, secondOpinion: { ...asking.secondOpinion, ...bad } };
      expect(() => kamcheckAnalytic.parseInput(input), JSON.stringify(bad)).to.throw(InvalidJobInputError);
    }
  });

  it('reads a stream check that learns its reference, and one whose capture failed; refuses a check with neither reference nor place to learn one', () => {
    const { imagePath: _image, ...noImage } = base;
    expect(kamcheckAnalytic.parseInput({ ...noImage, learnPath: '/l.jpg', picturePath: '/p.jpg' })).to.deep.equal({ ...noImage, learnPath: '/l.jpg', picturePath: '/p.jpg' });
    const failure = { code: 'source_timeout', message: 'the stream gave no clip in time' };
    expect(kamcheckAnalytic.parseInput({ captureFailure: failure })).to.deep.equal({ captureFailure: failure });
    expect(() => kamcheckAnalytic.parseInput(noImage)).to.throw(InvalidJobInputError);
    expect(() => kamcheckAnalytic.parseInput({ captureFailure: { code: 7 } })).to.throw(InvalidJobInputError);
  });
});
