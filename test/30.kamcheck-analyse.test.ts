// The tamper-check analytic on real decoded video: every labelled case of the generated test set
// (see scripts/make-kamcheck-fixtures.ts), and the limits runKamcheck enforces.
//
// Fixtures: node build/scripts/make-kamcheck-fixtures.js --set test test/fixtures/generated/kamcheck
// (`make fixtures`); generated here when missing. KAMCHECK_FIXTURES overrides the directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { analyseTamper, TamperCauses } from '../lib/kamcheck/analyse.js';
import { runKamcheck } from '../lib/kamcheck/run.js';
import { AnalyticError } from '../lib/errors.js';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { TAMPERED_AT } from '../lib/cameras/sensitivity.js';
import cv from '../lib/video/opencv.js';
import { BENIGN_KINDS, CaseKind, DEFAULT_FIXTURE_DIR, FixtureCase, FixtureManifest, TAMPER_KINDS, TamperKind } from '../testkit/kamcheck-fixtures/manifest.js';
import { generateFixtureSet, readManifest } from '../testkit/kamcheck-fixtures/generate.js';
import { applyLuts, defocus, gainLut, gammaLut, nudged, solid } from '../testkit/kamcheck-fixtures/effects.js';
import { filmEffect } from '../testkit/kamcheck-fixtures/films.js';
import { NoiseBank } from '../testkit/kamcheck-fixtures/scenes.js';
import { Prng } from '../testkit/kamcheck-fixtures/prng.js';

const FIXTURES = process.env.KAMCHECK_FIXTURES ?? DEFAULT_FIXTURE_DIR;

/** The cause each tamper kind must be blamed on. */
const CAUSE_OF: Record<TamperKind, keyof TamperCauses> = {
  blur: 'blur',
  moved: 'moved',
  masked_partial_flat: 'masked',
  masked_partial_textured: 'masked',
  masked_full: 'masked',
  overexposed: 'exposure',
  underexposed: 'exposure',
  frozen: 'frozen',
  black: 'black',
  // semi-transparent obscuration: the view is there, veiled
  smeared_partial: 'masked',
  smeared_full: 'masked',
  spray_mist: 'masked',
  fogged_window: 'masked',
  slight_defocus: 'blur',
  moved_slight: 'moved',
  // at night, by day or by night reference
  night_defocus: 'blur',
  night_masked: 'masked',
};

/**
 * Kinds of the night and of slight tampering that the bench shows short of their target on some
 * draws (docs/benchmarks.md, at night): a dark clip whose noise the encoder removed carries no
 * night sign; a slight defocus at night, in a noisy clip or under the infrared switch (then called
 * masked), can hide. So can a light grease film over the bland part of a scene (vtest.avi's floor, a sky),
 * which takes little contrast or detail that was there (docs/kamcheck.md, known limits; the dense
 * smears are tested below in every case). Most of their test cases must be right, not all; the
 * others must be right in every case.
 */
const MOSTLY_RIGHT: ReadonlySet<CaseKind> = new Set(['night_defocus', 'night_dark', 'headlights', 'lamps_on', 'smeared_partial']);

/** Runs `right` on every case of a kind; all must pass, or most for the MOSTLY_RIGHT kinds. */
function expectRight(kind: CaseKind, cases: FixtureCase[], right: (fixture: FixtureCase) => void): void {
  expect(cases.length, `cases of ${kind}`).to.be.at.least(2);
  if (!MOSTLY_RIGHT.has(kind)) {
    cases.forEach(right);
    return;
  }
  const wrong: string[] = [];
  for (const fixture of cases) {
    try {
      right(fixture);
    } catch (err) {
      wrong.push((err as Error).message);
    }
  }
  expect(wrong.length, wrong.join('\n')).to.be.below(cases.length / 2);
}
/** Smear opacity from which every smear must be flagged (the kinds span 0.55-0.95). */
const DENSE_SMEAR = 0.7;

function analyse(fixture: FixtureCase) {
  const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
  const reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
  expect(clip.frames.length, fixture.id).to.equal(fixture.frames);
  return analyseTamper(clip.frames, reference);
}

function describeResult(fixture: FixtureCase, r: { probability: number; causes: TamperCauses }): string {
  return `${fixture.id} (${fixture.scene}, crf ${fixture.crf}, ${JSON.stringify(fixture.params)}): p=${r.probability} ${JSON.stringify(r.causes)}`;
}

describe('kamcheck analyseTamper on the generated test set', function () {
  this.timeout(300_000);
  let manifest: FixtureManifest;

  before(async function () {
    manifest = readManifest(FIXTURES) ?? (await generateFixtureSet('test', FIXTURES));
  });

  for (const kind of TAMPER_KINDS) {
    it(`flags ${kind} (probability >= 50, blamed on ${CAUSE_OF[kind]})`, function () {
      expectRight(kind, manifest.cases.filter((c) => c.kind === kind), (fixture) => {
        const r = analyse(fixture);
        const own = r.causes[CAUSE_OF[kind]];
        const highest = Math.max(...Object.values(r.causes));
        expect(r.probability, describeResult(fixture, r)).to.be.at.least(50);
        expect(own === highest || own >= 50, describeResult(fixture, r)).to.equal(true);
      });
    });
  }

  it(`flags grease smears of opacity ${DENSE_SMEAR} and more, over part or all of the view, as masked`, function () {
    const cases = manifest.cases.filter((c) => (c.kind === 'smeared_partial' || c.kind === 'smeared_full') && Number(c.params.strength) >= DENSE_SMEAR);
    expect(cases.length, 'dense smear cases').to.be.at.least(2);
    for (const fixture of cases) {
      const r = analyse(fixture);
      expect(r.probability, describeResult(fixture, r)).to.be.at.least(50);
      expect(r.causes.masked, describeResult(fixture, r)).to.be.at.least(50);
    }
  });

  for (const kind of BENIGN_KINDS) {
    it(`does not flag ${kind} (probability < 50)`, function () {
      expectRight(kind, manifest.cases.filter((c) => c.kind === kind), (fixture) => {
        const r = analyse(fixture);
        expect(r.probability, describeResult(fixture, r)).to.be.below(50);
      });
    });
  }

  it('scores blur by how blurred the clip is, takes the strongest cause as the probability, and calls only a repeated frame frozen', function () {
    const fixture = manifest.cases.find((c) => c.kind === 'none')!;
    const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
    const reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
    // The same untampered clip defocused more and more: sigma 0, then 0.3%, 0.6% and 1.2% of the
    // width (the blur fixtures start at 0.6%).
    const results = [0, 0.003, 0.006, 0.012].map((share) => {
      const sigma = share * clip.width;
      const frames = sigma === 0 ? clip.frames : clip.frames.map((f) => defocus(f, sigma));
      return analyseTamper(frames, reference);
    });
    const report = JSON.stringify(results);
    const blur = results.map((r) => r.causes.blur);
    for (let i = 1; i < blur.length; i++) expect(blur[i], report).to.be.at.least(blur[i - 1]);
    expect(blur[0], report).to.be.below(50);
    expect(blur[blur.length - 1], report).to.be.at.least(50);
    // Causes are alternatives: the probability is the strongest one, not a sum or a mean.
    for (const r of results) expect(r.probability, report).to.equal(Math.max(...Object.values(r.causes)));

    // One frame has no pair to compare: never frozen. The same frame ten times is.
    const single = analyseTamper(clip.frames.slice(0, 1), reference);
    expect(single.causes.frozen, JSON.stringify(single)).to.equal(0);
    const repeated = analyseTamper(Array.from({ length: 10 }, () => clip.frames[0].copy()), reference);
    expect(repeated.causes.frozen, JSON.stringify(repeated)).to.be.at.least(50);
    expect(repeated.probability, JSON.stringify(repeated)).to.be.at.least(50);
  });

  it('scores a veil over the view as masked by how dense it is, and not a gamma or a darker scene', function () {
    const fixture = manifest.cases.find((c) => c.kind === 'none')!;
    const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
    const reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
    // The untampered clip under an even veil of light grey (200) letting through 1, 0.8, 0.5 and
    // 0.25 of the scene: a fogged pane from clear to dense (the fogged_window fixtures start at 0.45
    // opacity, with glare and some softening besides).
    const veiled = [0, 0.2, 0.5, 0.75].map((opacity) =>
      analyseTamper(opacity === 0 ? clip.frames : clip.frames.map((f) => f.convertTo(cv.CV_8UC3, 1 - opacity, 200 * opacity)), reference),
    );
    const report = JSON.stringify(veiled);
    const masked = veiled.map((r) => r.causes.masked);
    for (let i = 1; i < masked.length; i++) expect(masked[i], report).to.be.at.least(masked[i - 1]);
    expect(veiled[0].probability, report).to.be.below(50);
    expect(masked[masked.length - 1], report).to.be.at.least(50);
    // The same loss of relative contrast without a veil: gamma 0.6 lifts the shadows (bright cells
    // lose relative contrast, none loses grey levels); a gain of 0.6 darkens (every cell loses grey
    // levels, none relative contrast). Neither is tampering.
    const lift = gammaLut(0.6);
    const lifted = analyseTamper(clip.frames.map((f) => applyLuts(f, [lift, lift, lift])), reference);
    expect(lifted.probability, JSON.stringify(lifted)).to.be.below(50);
    const darker = analyseTamper(clip.frames.map((f) => f.convertTo(cv.CV_8UC3, 0.6, 0)), reference);
    expect(darker.probability, JSON.stringify(darker)).to.be.below(50);
  });

  /** The untampered case of a textured still scene (not vtest.avi's bland floor), decoded. */
  function texturedUntampered() {
    const fixture = manifest.cases.find((c) => c.kind === 'none' && !c.scene.startsWith('vtest'))!;
    const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
    const reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
    return { fixture, clip, reference };
  }

  it('finds a slight defocus of a camera that also moved a little, and no defocus in one that only moved', function () {
    // The camera nudged by 3 px right and 1.5 px down at the working size (320 px wide), a whole
    // number of the clip's pixels so that nothing here resamples it, then defocused by 2 px at 640
    // wide (the slight_defocus kind's least). The shift is compensated by resampling the reference,
    // which must not smooth away the detail the defocus is told by (blur.ts): resampled, the
    // reference scored these 1-7 (79-89 now).
    const cases = manifest.cases.filter((c) => c.kind === 'none');
    expect(cases.length).to.be.at.least(2);
    for (const fixture of cases) {
      const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
      const reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
      const moved = nudged(clip.frames, 3);
      const still = analyseTamper(moved, reference);
      expect(still.causes.blur, describeResult(fixture, still)).to.be.below(50);
      // a bump of 1% of the width is no turn of the camera, even at the high level (scorer.ts MOVED_CALIBRATION)
      expect(still.causes.moved, describeResult(fixture, still)).to.be.below(TAMPERED_AT.high);
      const soft = analyseTamper(moved.map((f) => defocus(f, (2 * clip.width) / 640)), reference);
      expect(soft.causes.blur, describeResult(fixture, soft)).to.be.at.least(50);
    }
  });

  it('flags a light film over part of the view as masked, and not a slight defocus of all of it', function () {
    const { fixture, clip, reference } = texturedUntampered();
    const W = clip.width;
    const H = clip.height;
    // a film of opacity 0.55 over the left 45% of the view, scattering by 1.5% of the width, 20% of
    // its light glare (the smeared_partial fixtures have 30-60%): it takes too little contrast for
    // a cell to be veiled, but the fine detail of the whole region
    const opacity = solid(H, W, [0, 0, 0]);
    opacity.drawRectangle(new cv.Point2(0, 0), new cv.Point2(Math.round(0.45 * W), H - 1), new cv.Vec3(140, 140, 140), -1);
    const film = filmEffect({ opacity: opacity.convertTo(cv.CV_32FC3, 1 / 255), scatterSigma: 0.015 * W, glare: 0.2, tint: [1, 1, 1], lift: 15 }, W, H);
    const filmed = analyseTamper(clip.frames.map(film), reference);
    expect(filmed.causes.masked, describeResult(fixture, filmed)).to.be.at.least(50);
    // A defocus of 0.2% of the width over all of the view takes fine detail from every cell too,
    // but keeps the contrast between cells: neither masked nor blurred.
    const soft = analyseTamper(clip.frames.map((f) => defocus(f, 0.002 * W)), reference);
    expect(soft.probability, describeResult(fixture, soft)).to.be.below(50);
  });

  it('says when a picture is too dark to judge its focus, and judges a dim night picture like any other', function () {
    const { fixture, clip, reference } = texturedUntampered();
    const W = clip.width;
    // lights out: near black, a little noise; the black cause decides, the focus is not guessed
    const black = analyseTamper(clip.frames.map((f) => f.convertTo(cv.CV_8UC3, 0.02, 2)), reference);
    expect(black.notJudged, describeResult(fixture, black)).to.deep.equal(['blur']);
    expect(black.causes.blur, describeResult(fixture, black)).to.equal(0);
    expect(black.probability, describeResult(fixture, black)).to.be.at.least(50);
    // a third of the brightness with the noise of night gain: still judged, and the same picture
    // defocused by 1% of the width is blurred
    const noise = new NoiseBank(new Prng(5));
    const rng = new Prng(6);
    const night = (f: cv.Mat) => noise.addNoise(f.convertTo(cv.CV_8UC3, 0.35, 0), 9, rng);
    const dim = analyseTamper(clip.frames.map(night), reference);
    expect(dim.notJudged, describeResult(fixture, dim)).to.deep.equal([]);
    const dimDefocused = analyseTamper(clip.frames.map((f) => night(defocus(f, 0.01 * W))), reference);
    expect(dimDefocused.notJudged, describeResult(fixture, dimDefocused)).to.deep.equal([]);
    expect(dimDefocused.causes.blur, describeResult(fixture, dimDefocused)).to.be.at.least(50);
  });

  it('flags a thin mist of coloured paint over the view, and neither a grey veil as thin nor a colour cast alone', function () {
    const { fixture, clip, reference } = texturedUntampered();
    const W = clip.width;
    const H = clip.height;
    const mist = (opacity: number, tint: [number, number, number]) =>
      filmEffect({ opacity: solid(H, W, [255, 255, 255]).convertTo(cv.CV_32FC3, opacity / 255), scatterSigma: 0.006 * W, glare: 0.7, tint, lift: 20 }, W, H);
    // orange paint at 0.2: its contrast loss alone is as small as a mild haze's, its colour is not
    const orange = analyseTamper(clip.frames.map(mist(0.2, [0.3, 1.1, 1.3])), reference);
    expect(orange.causes.masked, describeResult(fixture, orange)).to.be.at.least(50);
    const grey = analyseTamper(clip.frames.map(mist(0.2, [0.9, 0.9, 0.9])), reference);
    expect(grey.probability, describeResult(fixture, grey)).to.be.below(50);
    const denseGrey = analyseTamper(clip.frames.map(mist(0.4, [0.9, 0.9, 0.9])), reference);
    expect(denseGrey.causes.masked, describeResult(fixture, denseGrey)).to.be.at.least(50);
    // the colours move as far, the contrast stays
    const cast = analyseTamper(clip.frames.map((f) => applyLuts(f, [gainLut(0.75), gainLut(1), gainLut(1.2)])), reference);
    expect(cast.probability, describeResult(fixture, cast)).to.be.below(50);
  });

  it("frees its own pictures and leaves the caller's: a clip at the working size, in colour and in grey, analysed twice", function () {
    // at 320 px wide a frame is its own working picture, which the analysis must not free with
    // the pictures it made itself
    // (both take the night's measures too, half-scale pictures included: a 320x240 day clip's
    // fine noise counts as a little night evidence)
    for (const [kind, grey] of [['rain', false], ['rain', true], ['headlights', false]] as const) {
      const fixture = manifest.cases.find((c) => c.kind === kind && c.width === 320)!;
      const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 26);
      let reference = readImage(path.join(FIXTURES, fixture.id, 'reference.png'));
      let frames = clip.frames;
      if (grey) {
        reference = reference.bgrToGray();
        frames = frames.map((f) => f.bgrToGray());
      }
      const first = analyseTamper(frames, reference);
      expect(frames.every((f) => !f.empty && f.cols === 320) && !reference.empty, `${fixture.id}: the caller's pictures are intact`).to.equal(true);
      expect(analyseTamper(frames, reference), fixture.id).to.deep.equal(first);
    }
  });
});

describe('kamcheck runKamcheck', function () {
  this.timeout(120_000);
  let manifest: FixtureManifest;
  let tmp: string;

  before(async function () {
    manifest = readManifest(FIXTURES) ?? (await generateFixtureSet('test', FIXTURES));
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kamcheck-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  async function expectAnalyticError(promise: Promise<unknown>, code: string): Promise<void> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(AnalyticError);
      expect((err as AnalyticError).code).to.equal(code);
      expect((err as Error).message).to.be.a('string').and.not.empty;
      return;
    }
    expect.fail(`expected AnalyticError ${code}`);
  }

  it('analyses a clip and reports progress', async function () {
    const fixture = manifest.cases.find((c) => c.kind === 'black')!;
    const messages: string[] = [];
    const r = await runKamcheck(
      { videoPath: path.join(FIXTURES, fixture.id, 'clip.mp4'), imagePath: path.join(FIXTURES, fixture.id, 'reference.png') },
      (m) => messages.push(m),
    );
    expect(r.probability).to.be.at.least(50);
    expect(Object.keys(r.causes).sort()).to.deep.equal(['black', 'blur', 'exposure', 'frozen', 'masked', 'moved']);
    // The stages in order: the count is of the frames actually decoded, the last message carries
    // the result computed from them.
    expect(messages).to.deep.equal(['Decoding', `Analysing ${fixture.frames} frames`, `Tampering probability ${r.probability}%`]);
  });

  it('rejects a clip of more than 25 frames with too_many_frames', async function () {
    const fixture = manifest.cases.find((c) => c.width === 320)!;
    const reference = path.join(FIXTURES, fixture.id, 'reference.png');
    const long = path.join(tmp, 'long.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-loop', '1', '-i', reference, '-frames:v', '30', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', long]);
    await expectAnalyticError(runKamcheck({ videoPath: long, imagePath: reference }, () => undefined), 'too_many_frames');
  });

  /** A clip of `frames` frames of the fixture's reference picture with moving noise (so not frozen). */
  function stillClip(reference: string, frames: number): string {
    const clip = path.join(tmp, `still-${frames}.mp4`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-loop', '1', '-i', reference, '-vf', 'noise=alls=4:allf=t', '-frames:v', String(frames), '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
    return clip;
  }

  it('accepts exactly 25 frames and analyses all of them; 26 are refused', async function () {
    const fixture = manifest.cases.find((c) => c.width === 320)!;
    const reference = path.join(FIXTURES, fixture.id, 'reference.png');
    const clip = stillClip(reference, 25);
    const messages: string[] = [];
    const r = await runKamcheck({ videoPath: clip, imagePath: reference }, (m) => messages.push(m));
    expect(messages).to.deep.equal(['Decoding', 'Analysing 25 frames', `Tampering probability ${r.probability}%`]);
    // The camera's own view with sensor noise: not tampered.
    expect(r.probability, JSON.stringify(r)).to.be.below(50);
    // The same result as the analysis of all 25 decoded frames.
    const decoded = readVideoFrames(clip);
    expect(decoded.frames).to.have.length(25);
    const { renewedReference, learnedReference: _learned, ...analysis } = r;
    expect(analysis).to.deep.equal(analyseTamper(decoded.frames, readImage(reference)));
    expect(renewedReference, 'no refresh was asked').to.equal(false);

    await expectAnalyticError(runKamcheck({ videoPath: stillClip(reference, 26), imagePath: reference }, () => undefined), 'too_many_frames');
  });

  it('rejects a reference of another size with resolution_mismatch', async function () {
    const a = manifest.cases.find((c) => c.width === 640)!;
    const b = manifest.cases.find((c) => c.width === 1280)!;
    await expectAnalyticError(
      runKamcheck({ videoPath: path.join(FIXTURES, a.id, 'clip.mp4'), imagePath: path.join(FIXTURES, b.id, 'reference.png') }, () => undefined),
      'resolution_mismatch',
    );
  });
});
