// The frame loop (lib/facelog/analyse.ts) with a fake detector plugged into the real tracker,
// motion source and scan schedule, on the real decoded frames of the fixture video with nobody in
// it: every face the loop reports comes from the detector's script, so the test shows that the
// loop runs the detector it is given, feeds its faces to the tracker, and hands the tracked faces
// back to the detector's next runs.
import path from 'node:path';
import { expect } from 'chai';
import type cv from '../lib/video/opencv.js';
import { readFrames } from '../lib/video/frame-reader.js';
import { analyseFrames } from '../lib/facelog/analyse.js';
import { faceLogStages } from '../lib/facelog/run.js';
import type { FaceDetector } from '../lib/facelog/detect/detector.js';
import { planCost } from '../lib/facelog/detect/blazeface.js';
import { iou } from '../lib/facelog/geometry.js';
import type { DetectOptions, FaceDetection } from '../lib/facelog/types.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, facelogVideo, readTruth } from '../testkit/facelog-fixtures/truth.js';
import { faceModels } from '../lib/facelog/models.js';
import { descriptorDistance } from '../lib/facelog/appearance/descriptor.js';
import { stitchTracks, TrackStitcher, type TrackSummary } from '../lib/facelog/sightings/stitch.js';

const face = (x: number, y: number, width: number): FaceDetection => ({ box: { x, y, width, height: width }, score: 0.9 });

/** A face walking right, found at detector runs 0-5 (frames 0-25, a run every 5 frames at 25 fps)... */
const walking = (run: number) => face(100 + 4 * run, 150, 60);
/** ...and a face found once, at run 2 (frame 10): a tentative track, dropped. */
const ONE_OFF = face(400, 250, 50);
/** What the detector finds, run by run; nothing from run 6 on. */
const SCRIPT: FaceDetection[][] = [0, 1, 2, 3, 4, 5].map((run) => (run === 2 ? [walking(run), ONE_OFF] : [walking(run)]));

/**
 * A detector that returns the script's faces, run by run, and records what it was asked. It prices
 * its runs as BlazeFace does, so that the scan schedule plans for it as for the real one.
 */
function scriptedDetector(): FaceDetector & { calls: { width: number; height: number; options: DetectOptions }[] } {
  const calls: { width: number; height: number; options: DetectOptions }[] = [];
  return {
    calls,
    detect(frame: cv.Mat, options: DetectOptions) {
      calls.push({ width: frame.cols, height: frame.rows, options });
      return SCRIPT[calls.length - 1] ?? [];
    },
    cost: planCost,
  };
}

describe('face log: stages plugged into the frame loop', function () {
  this.timeout(120_000);

  it('tracks the faces an injected detector reports, and only those', async () => {
    const truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, 'test-06-empty-640x480.truth.json'));
    const options = { width: truth.width, height: truth.height, fps: truth.fps, minSize: 30, totalFrames: 0, still: false };
    const detector = scriptedDetector();
    let written = 0;
    let described = 0;
    const source = readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height });
    const result = await analyseFrames(
      source,
      { write: async () => void written++ },
      faceLogStages(detector, options),
      { describe: () => (described++, new Float32Array(128)) },
      options,
      () => {},
    );

    expect(result.framesProcessed).to.equal(truth.frame_count);
    expect(written, 'every frame drawn').to.equal(truth.frame_count);
    expect(detector.calls.length, 'a detector run every 5 frames').to.equal(Math.ceil(truth.frame_count / 5));
    expect(detector.calls.every((c) => c.width === truth.width && c.height === truth.height)).to.equal(true);
    expect(detector.calls[0].options, 'the first run searches the whole frame').to.deep.equal({ minSize: 30 });
    // The tracked face comes back to the detector: looked for at the next run around where KCF
    // has it (KCF drifts a little here, with no real face to follow).
    const asked = detector.calls[1].options.faces ?? [];
    expect(asked.length).to.equal(1);
    expect(iou(asked[0], walking(0).box)).to.be.at.least(0.3);

    // One track, of the walking face; the one-off face never became one.
    expect(result.tracks.map((t) => t.number)).to.deep.equal([1]);
    const [track] = result.tracks;
    const detected = track.faces.filter((f) => f.detected);
    expect(detected.map((f) => f.frame)).to.deep.equal([0, 5, 10, 15, 20, 25]);
    expect(detected.map((f) => f.box)).to.deep.equal(SCRIPT.map((faces) => faces[0].box));
    expect(track.detectionCount).to.equal(6);
    // KCF follows it between runs; the track ends after 4 missed runs (frames 30-45), its tail cut
    // at the first of them.
    expect(track.ended).to.equal(true);
    expect(track.faces.map((f) => f.frame)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i));
    expect(described, 'the face was described').to.be.greaterThan(0);
    expect(result.groups, 'one sighting, stitched as the track ended').to.deep.equal([[1]]);
  });
});

describe('face log: tracks stitched as they end, on a real video', function () {
  this.timeout(300_000);

  // A long video's tracks keep their descriptors only while a track to come may still pair with
  // them (sightings/stitch.ts). The loop's promise that no track starts before the bound it gave
  // is what makes that safe: checked here on the real detector, tracker and backfill.
  it('lets tracks go as the video runs, never one a later track pairs with, and stitches as the whole video at once', async () => {
    const { file, truth } = facelogVideo('reappear');
    const models = faceModels();
    const options = { width: truth.width, height: truth.height, fps: truth.fps, minSize: 30, totalFrames: 0, still: false };
    const stages = faceLogStages(models.detector, options);
    const stitcher = stages.stitcher as TrackStitcher;
    const added: TrackSummary[] = [];
    let bound = -Infinity;
    const early: number[] = [];
    let mostLetGo = 0;
    stages.stitcher = {
      add: (t) => {
        if (t.startFrame < bound) early.push(t.number);
        added.push({ ...t, descriptors: [...t.descriptors] });
        stitcher.add(t);
      },
      settle: (earliest) => {
        bound = Math.max(bound, earliest);
        stitcher.settle(earliest);
        mostLetGo = Math.max(mostLetGo, added.length - stitcher.pendingCount);
      },
      groups: () => stitcher.groups(),
    };
    const result = await analyseFrames(
      readFrames(file, { width: truth.width, height: truth.height }),
      { write: async () => {} },
      stages,
      { describe: (frame, f) => models.describer.describe(frame, f) },
      options,
      () => {},
    );

    expect(added.map((t) => t.number).sort((a, b) => a - b), 'every track stitched once').to.deep.equal(result.tracks.map((t) => t.number));
    expect(early, 'tracks that started before the bound the loop had given').to.deep.equal([]);
    expect(mostLetGo, `tracks let go before the end, of ${added.length}`).to.be.greaterThan(0);
    expect(added.some((t) => t.descriptors.length > 0), 'descriptors reached the stitcher').to.equal(true);
    expect(result.groups).to.deep.equal(stitchTracks(added, { fps: truth.fps, distance: descriptorDistance }));
    expect(result.groups.length).to.be.at.least(truth.appearances.length);
  });
});
