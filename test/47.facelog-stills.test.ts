// Still images through the whole face log (runFaceLog, still: true: ffmpeg decoding, the real
// detector and its test of evidence, lib/facelog/detect/still-evidence.ts), on generated stills with
// exact ground truth (testkit/facelog-fixtures/stills.ts): real faces on a textured picture give
// exactly the true faces as sightings, each with confidence >= 0.4, and texture alone gives none.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { probeMedia } from '../lib/video/probe.js';
import { publishResults } from '../lib/jobs/published-results.js';
import { MIN_SIGHTING_CONFIDENCE, runFaceLog } from '../lib/facelog/run.js';
import { xmlFile } from '../lib/facelog/output/result-files.js';
import { iou } from '../lib/facelog/geometry.js';
import { faceModels } from '../lib/facelog/models.js';
import { MIN_STILL_EVIDENCE, seeAgain, stillEvidence, STILL_VIEWS } from '../lib/facelog/detect/still-evidence.js';
import cv from '../lib/video/opencv.js';
import { parseFaceLogXml } from '../testkit/facelog-fixtures/read-xml.js';
import { readTruth, type FacelogTruth } from '../testkit/facelog-fixtures/truth.js';
import { DEFAULT_STILLS_DIR, generateTestStills, readStillsManifest } from '../testkit/facelog-fixtures/stills.js';

/** `make fixtures` writes them; without it (a single test file run by hand) they are drawn here, in a second. */
function stillsDir(): { dir: string; temporary: boolean } {
  if (readStillsManifest(DEFAULT_STILLS_DIR)) return { dir: DEFAULT_STILLS_DIR, temporary: false };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'facelog-stills-'));
  generateTestStills(dir);
  return { dir, temporary: true };
}

describe('face log on still images', function () {
  this.timeout(300_000);
  const { dir, temporary } = stillsDir();
  const manifest = readStillsManifest(dir)!;
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'facelog-stills-results-'));
  after(() => {
    fs.rmSync(results, { recursive: true, force: true });
    if (temporary) fs.rmSync(dir, { recursive: true, force: true });
  });

  const still = (name: string) => {
    const v = manifest.videos.find((x) => x.name === name);
    if (!v) throw new Error(`no still ${name} in ${dir}`);
    return { file: path.join(dir, v.file), truth: readTruth(path.join(dir, v.truth)) };
  };

  async function faceLog(file: string, truth: FacelogTruth) {
    const media = await probeMedia(file);
    const jobId = path.basename(file, '.jpg');
    const out = path.join(results, jobId);
    const r = await runFaceLog(
      { jobId, videoPath: file, videoName: path.basename(file), resultsDir: out, width: media.width, height: media.height, fps: media.fps,
        frames: 1, still: true, startFrame: 0, maxFrames: 0, minSize: 30, gender: false, trackThumbnails: false },
      () => undefined,
    );
    expect(r.frames_processed).to.equal(1);
    expect([media.width, media.height]).to.deep.equal([truth.width, truth.height]);
    // The queue moves the run's files into place once the outcome is recorded; here, now.
    expect(r.stagedResults.to).to.equal(out);
    publishResults(r.stagedResults);
    const xml = parseFaceLogXml(fs.readFileSync(path.join(out, xmlFile(jobId)), 'utf8'));
    const boxOf = (id: string) => {
      const track = xml.tracks.find((t) => t.sighting === id)!;
      return xml.faces.find((f) => f.track === track.number)!;
    };
    return { sightings: r.sightings.map((s) => ({ ...s, box: boxOf(s.sighting_id) })), tracks: xml.tracks };
  }

  it('faces 48-150 px on a textured picture: exactly the true faces, each with confidence >= 0.4', async () => {
    const { file, truth } = still('test-faces-building');
    expect(truth.appearances.length).to.equal(4);
    expect(new Set(truth.appearances.map((a) => a.gender))).to.deep.equal(new Set(['male', 'female']));
    const { sightings } = await faceLog(file, truth);
    expect(sightings.length, JSON.stringify(sightings.map((s) => [s.box, s.confidence]))).to.equal(truth.appearances.length);
    const matched = new Set<number>();
    for (const s of sightings) {
      expect(s.confidence).to.be.at.least(MIN_SIGHTING_CONFIDENCE);
      const k = truth.appearances.findIndex((a, i) => !matched.has(i) && iou(s.box, a.boxes[0]) >= 0.3);
      expect(k, `sighting at ${JSON.stringify(s.box)} lies on a truth face`).to.be.at.least(0);
      matched.add(k);
      expect(s.frames).to.equal(1);
      expect([s.start_frame, s.end_frame]).to.deep.equal([0, 0]);
    }
  });

  it('texture only: no sighting, though the detector alone finds face-like texture there', async () => {
    const { file, truth } = still('test-texture-only');
    expect(truth.appearances).to.deep.equal([]);
    // The point of the test: the whole-image search does report something here (score >= 0.5)...
    const { detector } = faceModels();
    const frame = cv.imread(file, cv.IMREAD_COLOR);
    const found = detector.detect(frame, { minSize: 30 });
    expect(found.length, 'face-like texture in the picture').to.be.greaterThan(0);
    // ...which the other views do not confirm.
    for (const d of seeAgain(detector, frame, found)) {
      expect(d.views).to.have.length(STILL_VIEWS.length);
      expect(stillEvidence(d)).to.be.below(MIN_STILL_EVIDENCE);
    }
    const { sightings, tracks } = await faceLog(file, truth);
    expect(sightings).to.deep.equal([]);
    // Its detections stay in the XML as tracks without a sighting, as a weak track of a video does.
    expect(tracks.length).to.be.greaterThan(0);
    for (const t of tracks) expect(t.sighting).to.equal('');
  });
});
