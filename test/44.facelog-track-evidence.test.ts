// What the face log keeps per track (lib/facelog/track-evidence.ts), on a real fixture video: the
// real detector's boxes of one person walking towards the camera in every frame (the frame loop
// runs it every fifth frame; every frame is the worst case), given to the real descriptor and
// gender models, counted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readFrames } from '../lib/video/frame-reader.js';
import { faceModels } from '../lib/facelog/models.js';
import { TrackEvidence, MIN_DESCRIBE_WIDTH } from '../lib/facelog/track-evidence.js';
import { iou } from '../lib/facelog/geometry.js';
import type { FaceDetection } from '../lib/facelog/types.js';
import { DEFAULT_FACELOG_FIXTURE_DIR, readTruth } from '../testkit/facelog-fixtures/truth.js';

describe('face log: evidence kept per track', function () {
  this.timeout(120_000);

  it('describes a few views and classifies gender at sample points, not on every detection', async () => {
    const truth = readTruth(path.join(DEFAULT_FACELOG_FIXTURE_DIR, 'test-01-single-640x480.truth.json'));
    const models = faceModels();
    const evidence = new TrackEvidence();
    // The same faces, for a crop kept in a file as the face log keeps them (no models needed).
    const onDisk = new TrackEvidence();
    const calls = { describe: 0, gender: 0, detections: 0 };
    const widths: number[] = [];
    const analysers = {
      describe: (frame: Parameters<typeof models.describer.describe>[0], face: FaceDetection) => {
        calls.describe++;
        return models.describer.describe(frame, face);
      },
      classifyGender: (frame: Parameters<typeof models.gender.classify>[0], face: FaceDetection) => {
        calls.gender++;
        return models.gender.classify(frame, face);
      },
    };
    let index = 0;
    for await (const frame of readFrames(path.join(DEFAULT_FACELOG_FIXTURE_DIR, truth.file), { width: truth.width, height: truth.height }).frames()) {
      const want = truth.appearances[0].boxes.find((b) => b.frame === index);
      if (want) {
        const face = models.detector.detect(frame.bgr(), { minSize: 30 }).find((d) => iou(d.box, want) >= 0.3);
        if (face) {
          calls.detections++;
          widths.push(face.box.width);
          evidence.observe(frame.bgr(), index, truth.fps, face, analysers);
          onDisk.observe(frame.bgr(), index, truth.fps, face, { describe: () => new Float32Array(128) });
        }
      }
      frame.release();
      index++;
    }
    const described = widths.filter((w) => w >= MIN_DESCRIBE_WIDTH).length;
    expect(described, 'detections wide enough to describe').to.be.at.least(40);
    // Up to 4 descriptors, one per sample point (the face grew by a third, or 1.5 s passed).
    expect(evidence.descriptors.length).to.be.within(2, 4);
    expect(calls.describe).to.equal(evidence.descriptors.length);
    expect(evidence.descriptors.every((d) => d.length === 128)).to.equal(true);
    // Gender: the first detection, then the sample points (about one per descriptor, and one more
    // once the face has grown by another third): a handful of calls, not one per detection.
    expect(evidence.genderVotes.length).to.be.within(2, 6);
    expect(calls.gender, `gender classifications for ${calls.detections} detections`).to.be.within(2, 6);
    expect(evidence.genderVotes.every((v) => v.male >= 0 && v.male <= 1 && v.weight > 0)).to.equal(true);
    // The thumbnail crop is kept, with a margin around the face; compressed once the track ends.
    const crop = evidence.bestCrop()!;
    expect(crop, 'best crop').to.not.equal(null);
    expect(crop.cols).to.be.greaterThan(Math.min(...widths));
    evidence.compact();
    const kept = evidence.bestCrop()!;
    expect([kept.cols, kept.rows, kept.channels]).to.deep.equal([crop.cols, crop.rows, 3]);
    // JPEG at quality 95: the same picture within a few grey levels on average.
    const diff = kept.absdiff(crop).mean();
    expect((diff.x + diff.y + diff.z) / 3, 'mean absolute difference').to.be.below(3);
    // Kept in a file instead: the same JPEG, read back from it.
    const file = path.join(os.tmpdir(), `vaa-test-crop-${process.pid}.jpg`);
    try {
      onDisk.compact(file);
      expect(onDisk.hasCrop).to.equal(true);
      expect(fs.statSync(file).size).to.be.greaterThan(1000);
      const fromFile = onDisk.bestCrop()!;
      expect([fromFile.cols, fromFile.rows]).to.deep.equal([kept.cols, kept.rows]);
      const same = fromFile.absdiff(kept).mean();
      expect(same.x + same.y + same.z, 'the file holds the same picture').to.equal(0);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
