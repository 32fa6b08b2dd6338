// The face-log fixture generator (scripts/make-facelog-fixtures.ts) and the sighting scorer
// (testkit/facelog-fixtures/score.ts): the generated test set decodes as its truth says, the truth
// describes what is in the pictures, and the scorer counts matches, duplicates and genders right.
//
// Fixtures: node build/scripts/make-facelog-fixtures.js --set test test/fixtures/generated/facelog
// (`make fixtures`); generated here when missing. FACELOG_FIXTURES overrides the directory.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';
import { iou } from '../lib/facelog/geometry.js';
import { generateFacelogSet } from '../testkit/facelog-fixtures/generate.js';
import { loadFaceList } from '../testkit/facelog-fixtures/faces.js';
import { REAPPEAR_MIN_GAP_FRAMES } from '../testkit/facelog-fixtures/scenarios.js';
import { combineScores, intervalIoU, scoreSightings, type TruthInterval } from '../testkit/facelog-fixtures/score.js';
import {
  DEFAULT_FACELOG_FIXTURE_DIR, readFacelogManifest, readTruth, SCENARIOS, type FacelogManifest, type FacelogTruth, type TruthFaceBox,
} from '../testkit/facelog-fixtures/truth.js';

const FIXTURES = process.env.FACELOG_FIXTURES ?? DEFAULT_FACELOG_FIXTURE_DIR;

function probe(file: string): { width: number; height: number; frames: number } {
  const out = execFileSync('ffprobe', [
    '-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,nb_read_frames', '-of', 'json', file,
  ]).toString();
  const s = JSON.parse(out).streams[0];
  return { width: s.width, height: s.height, frames: Number(s.nb_read_frames) };
}

describe('face-log fixture generator: the test set', function () {
  this.timeout(180_000);
  let manifest: FacelogManifest;
  let truths: FacelogTruth[];
  const videos = () => truths.filter((t) => t.scenario !== 'still');

  before(async function () {
    manifest = readFacelogManifest(FIXTURES) ?? (await generateFacelogSet('test', FIXTURES));
    truths = manifest.videos.map((v) => readTruth(path.join(FIXTURES, v.truth)));
  });

  it('holds every scenario, a 1280x720 video and a still, both genders', function () {
    expect(new Set(truths.map((t) => t.scenario))).to.deep.equal(new Set(SCENARIOS));
    expect(truths.some((t) => t.width === 1280 && t.height === 720 && t.scenario !== 'still')).to.equal(true);
    const genders = truths.flatMap((t) => t.appearances.map((a) => a.gender));
    expect(genders).to.include('male').and.to.include('female');
    for (const t of videos()) expect(t.frame_count, t.name).to.be.at.most(t.scenario === 'reappear' ? 300 : 150);
  });

  it('decodes every video with the frame count and size of its truth, and the still as one picture', function () {
    for (const t of truths) {
      const file = path.join(FIXTURES, t.file);
      expect(fs.existsSync(file), file).to.equal(true);
      const p = probe(file);
      expect([p.width, p.height], t.name).to.deep.equal([t.width, t.height]);
      if (t.scenario === 'still') expect(t.frame_count).to.equal(1);
      else expect(p.frames, t.name).to.equal(t.frame_count);
    }
  });

  it('has one box per frame of each appearance, inside the frame', function () {
    for (const t of truths) {
      for (const a of t.appearances) {
        expect(a.boxes.map((b) => b.frame), `${t.name} #${a.id}`).to.deep.equal(
          Array.from({ length: a.end_frame - a.start_frame + 1 }, (_, k) => a.start_frame + k),
        );
        expect(a.end_frame).to.be.below(t.frame_count);
        for (const b of a.boxes) {
          const where = `${t.name} #${a.id} frame ${b.frame}: ${JSON.stringify(b)}`;
          expect(b.x, where).to.be.at.least(0);
          expect(b.y, where).to.be.at.least(0);
          expect(b.x + b.width, where).to.be.at.most(t.width);
          expect(b.y + b.height, where).to.be.at.most(t.height);
          expect(b.width, where).to.be.above(0);
          if (b.visible > 0.99) expect(b.height / b.width, where).to.be.within(0.6, 1.8); // a face, unless cut by the frame edge
        }
      }
    }
  });

  it('grows every walking face from about 30 px to about 150 px', function () {
    for (const t of videos()) {
      for (const a of t.appearances) {
        const widths = a.boxes.filter((b) => b.visible > 0.99).map((b) => b.width);
        const where = `${t.name} #${a.id} ${a.face}`;
        expect(widths[0], where).to.be.within(25, 45);
        // the far one of two crossing people stays smaller (95-120 px)
        expect(Math.max(...widths), where).to.be.within(t.scenario === 'crossing' ? 85 : 120, 200);
      }
    }
  });

  it('makes each scenario what its name says', function () {
    const one = (s: string) => truths.find((t) => t.scenario === s)!;
    expect(one('single').appearances).to.have.length(1);
    expect(one('sequence').appearances.length).to.be.within(2, 3);
    expect(one('empty').appearances).to.have.length(0);
    const still = one('still');
    expect(still.appearances.length).to.be.within(2, 3);
    expect(still.appearances.every((a) => a.start_frame === 0 && a.end_frame === 0 && !a.boxes[0].occluded)).to.equal(true);

    // crossing: two people whose face boxes overlap for some frames, one hidden for a while
    const [p, q] = one('crossing').appearances;
    expect(p.identity).to.not.equal(q.identity);
    const overlapping = p.boxes.filter((b) => q.boxes.some((c) => c.frame === b.frame && iou(b, c) > 0)).length;
    expect(overlapping, 'frames with overlapping boxes').to.be.at.least(2);
    expect([...p.boxes, ...q.boxes].some((b) => b.occluded)).to.equal(true);

    // occlusion: one appearance hidden for 5-15 frames, not split
    const occ = one('occlusion').appearances;
    expect(occ).to.have.length(1);
    expect(occ[0].boxes.filter((b) => b.occluded).length).to.be.within(5, 15);

    // reappear: the same person twice, more than 5 s apart
    const [r1, r2] = one('reappear').appearances;
    expect(r1.identity).to.equal(r2.identity);
    expect(r2.start_frame - r1.end_frame - 1).to.be.at.least(REAPPEAR_MIN_GAP_FRAMES);
  });

  it('puts a face where the truth says (OpenCV frontal-face cascade on the largest unhidden box)', function () {
    const cascade = new cv.CascadeClassifier('/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml');
    let checked = 0;
    let found = 0;
    const misses: string[] = [];
    for (const t of truths) {
      const wanted = new Map<number, Array<{ name: string; box: TruthFaceBox }>>();
      for (const a of t.appearances) {
        const clear = a.boxes.filter((b) => b.visible > 0.99 && b.width < 140);
        if (clear.length === 0) continue;
        const box = clear.reduce((m, b) => (b.width > m.width ? b : m));
        wanted.set(box.frame, [...(wanted.get(box.frame) ?? []), { name: `${t.name} #${a.id} ${a.face}`, box }]);
      }
      if (wanted.size === 0) continue;
      const file = path.join(FIXTURES, t.file);
      const cap = t.scenario === 'still' ? undefined : new cv.VideoCapture(file);
      const last = Math.max(...wanted.keys());
      for (let f = 0; f <= last; f++) {
        const frame = cap ? cap.read() : cv.imread(file);
        const here = wanted.get(f);
        if (!here) continue;
        const grey = frame.bgrToGray();
        for (const { name, box } of here) {
          // search around the box only: the whole 720p frame takes seconds on a loaded machine
          const x0 = Math.max(0, Math.floor(box.x - 0.6 * box.width));
          const y0 = Math.max(0, Math.floor(box.y - 0.6 * box.height));
          const x1 = Math.min(t.width, Math.ceil(box.x + 1.6 * box.width));
          const y1 = Math.min(t.height, Math.ceil(box.y + 1.6 * box.height));
          const roi = grey.getRegion(new cv.Rect(x0, y0, x1 - x0, y1 - y0));
          const detections = cascade.detectMultiScale(roi, 1.05, 3, 0, new cv.Size(Math.max(20, Math.round(box.width * 0.5)), Math.max(20, Math.round(box.width * 0.5)))).objects;
          checked++;
          if (detections.some((d) => iou({ x: d.x + x0, y: d.y + y0, width: d.width, height: d.height }, box) > 0.3)) found++;
          else misses.push(name);
        }
      }
      cap?.release();
    }
    // the cascade misses sunglasses and turned heads: most, not all
    expect(found / checked, `missed: ${misses.join(', ')}`).to.be.at.least(0.7);
  });

  it('labels at least 15 frontal people of each gender in faces.json', function () {
    const faces = loadFaceList();
    const people = (g: string) => new Set(faces.filter((f) => f.frontal && f.gender === g).map((f) => f.identity)).size;
    expect(people('male')).to.be.at.least(15);
    expect(people('female')).to.be.at.least(15);
  });
});

describe('scoreSightings', () => {
  const truth = (start: number, end: number, gender: 'male' | 'female' = 'male'): TruthInterval => ({ start_frame: start, end_frame: end, gender });
  const sighting = (start: number, end: number, gender?: string) => ({ start_frame: start, end_frame: end, gender });

  it('measures the overlap of frame intervals with both ends included', () => {
    expect(intervalIoU(sighting(0, 9), sighting(0, 9))).to.equal(1);
    expect(intervalIoU(sighting(0, 9), sighting(5, 14))).to.equal(5 / 15);
    expect(intervalIoU(sighting(0, 9), sighting(10, 19))).to.equal(0);
  });

  it('scores a perfect log 1 and an empty video with nothing found 1', () => {
    const s = scoreSightings([truth(0, 99), truth(150, 250)], [sighting(2, 97), sighting(150, 240)]);
    expect([s.matched, s.precision, s.recall, s.f1, s.duplicates]).to.deep.equal([2, 1, 1, 1, 0]);
    const e = scoreSightings([], []);
    expect([e.precision, e.recall, e.f1, e.duplicate_rate]).to.deep.equal([1, 1, 1, 0]);
  });

  it('counts a sighting on an empty video against precision', () => {
    const s = scoreSightings([], [sighting(0, 10)]);
    expect([s.precision, s.recall, s.f1, s.duplicates]).to.deep.equal([0, 1, 0, 0]);
  });

  it('needs an interval IoU of 0.5', () => {
    expect(scoreSightings([truth(0, 99)], [sighting(0, 49)]).matched).to.equal(1); // 50/100
    const s = scoreSightings([truth(0, 99)], [sighting(0, 48)]); // 49/100
    expect([s.matched, s.precision, s.recall, s.duplicates]).to.deep.equal([0, 0, 0, 0]);
  });

  it('calls the second half of a split appearance a duplicate', () => {
    const s = scoreSightings([truth(0, 99)], [sighting(0, 69), sighting(72, 99)]);
    expect([s.matched, s.duplicates, s.duplicate_rate, s.precision, s.recall]).to.deep.equal([1, 1, 1, 0.5, 1]);
  });

  it('finds one of two appearances merged into one sighting', () => {
    const s = scoreSightings([truth(0, 49), truth(50, 99)], [sighting(0, 99)]);
    expect([s.matched, s.precision, s.recall, s.duplicates]).to.deep.equal([1, 1, 0.5, 0]);
  });

  it('matches one-to-one, best overlap first', () => {
    // p0 fits the second appearance (IoU 0.82) and, less well, the first (0.54); p1 fits only the
    // first (0.95). Taking the first appearance's first fit (p0) would leave the second unmatched.
    const s = scoreSightings([truth(40, 139), truth(0, 99)], [sighting(10, 109), sighting(45, 139)]);
    expect([s.matched, s.precision, s.recall]).to.deep.equal([2, 1, 1]);
    const twice = scoreSightings([truth(0, 99)], [sighting(0, 99), sighting(0, 99)]);
    expect([twice.matched, twice.duplicates]).to.deep.equal([1, 1]);
  });

  it('pairs people on screen together by where their faces are, when the sightings say', () => {
    // Two people crossing over nearly the same frames: by interval alone the man's sighting
    // (5-85) fits the woman's appearance (6-88) best, which would score both genders wrong.
    const walk = (x0: number, dx: number, start: number, end: number) =>
      Array.from({ length: end - start + 1 }, (_, i) => ({ frame: start + i, x: x0 + dx * i, y: 100, width: 40, height: 40 }));
    const man = { ...truth(2, 96, 'male'), boxes: walk(0, 4, 2, 96) };
    const woman = { ...truth(6, 88, 'female'), boxes: walk(400, -4, 6, 88) };
    const his = { ...sighting(5, 85, 'male'), faces: walk(12, 4, 5, 85) };
    const hers = { ...sighting(10, 90, 'female'), faces: walk(384, -4, 10, 88) };
    const byTime = scoreSightings([man, woman], [sighting(5, 85, 'male'), sighting(10, 90, 'female')]);
    expect([byTime.gender.male.correct, byTime.gender.female.correct]).to.deep.equal([0, 0]);
    const byPlace = scoreSightings([man, woman], [his, hers]);
    expect([byPlace.matched, byPlace.gender.male.correct, byPlace.gender.female.correct]).to.deep.equal([2, 1, 1]);
    // Place only orders the pairs: an interval below MATCH_IOU still does not match.
    expect(scoreSightings([man], [{ ...his, start_frame: 60 }]).matched).to.equal(0);
  });

  it('does not call a sighting a duplicate of an appearance nobody matched', () => {
    const s = scoreSightings([truth(0, 99), truth(200, 299)], [sighting(0, 99), sighting(200, 230)]);
    expect([s.matched, s.duplicates]).to.deep.equal([1, 0]);
  });

  it('scores gender on matched sightings that have one, by true gender', () => {
    const s = scoreSightings(
      [truth(0, 99, 'male'), truth(100, 199, 'male'), truth(200, 299, 'female'), truth(300, 399, 'female'), truth(400, 499, 'female')],
      [sighting(0, 99, 'male'), sighting(100, 199, 'female'), sighting(200, 299, 'female'), sighting(300, 399, ''), sighting(400, 499, 'female'), sighting(600, 700, 'male')],
    );
    expect(s.gender.male).to.deep.equal({ classified: 2, correct: 1, accuracy: 0.5 });
    expect(s.gender.female).to.deep.equal({ classified: 2, correct: 2, accuracy: 1 });
    expect(s.gender.accuracy).to.equal(0.75);
    expect(s.gender.balanced_accuracy).to.equal(0.75);
    const none = scoreSightings([truth(0, 99, 'female')], [sighting(0, 99)]);
    expect([none.gender.accuracy, none.gender.male.accuracy, none.gender.balanced_accuracy]).to.deep.equal([null, null, null]);
  });

  it('takes a truth file and pools several videos', () => {
    const file = { appearances: [{ ...truth(0, 99, 'female'), id: 0 }] };
    const a = scoreSightings(file, [sighting(0, 99, 'female')]);
    const b = scoreSightings([truth(0, 99, 'male'), truth(200, 299)], [sighting(0, 99, 'female'), sighting(0, 99), sighting(500, 600)]);
    const all = combineScores([a, b]);
    expect([all.truth, all.predicted, all.matched, all.duplicates]).to.deep.equal([3, 4, 2, 1]);
    expect(all.precision).to.equal(0.5);
    expect(all.recall).to.equal(2 / 3);
    expect(all.duplicate_rate).to.equal(1 / 3);
    expect(all.gender.female).to.deep.equal({ classified: 1, correct: 1, accuracy: 1 });
    expect(all.gender.male).to.deep.equal({ classified: 1, correct: 0, accuracy: 0 });
  });
});
