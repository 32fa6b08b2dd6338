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
import { BENIGN_KINDS, DEFAULT_FIXTURE_DIR, FixtureCase, FixtureManifest, TAMPER_KINDS, TamperKind } from '../testkit/kamcheck-fixtures/manifest.js';
import { generateFixtureSet, readManifest } from '../testkit/kamcheck-fixtures/generate.js';

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
};

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
      const cases = manifest.cases.filter((c) => c.kind === kind);
      expect(cases.length, `cases of ${kind}`).to.be.at.least(2);
      for (const fixture of cases) {
        const r = analyse(fixture);
        const own = r.causes[CAUSE_OF[kind]];
        const highest = Math.max(...Object.values(r.causes));
        expect(r.probability, describeResult(fixture, r)).to.be.at.least(50);
        expect(own === highest || own >= 50, describeResult(fixture, r)).to.equal(true);
      }
    });
  }

  for (const kind of BENIGN_KINDS) {
    it(`does not flag ${kind} (probability < 50)`, function () {
      const cases = manifest.cases.filter((c) => c.kind === kind);
      expect(cases.length, `cases of ${kind}`).to.be.at.least(2);
      for (const fixture of cases) {
        const r = analyse(fixture);
        expect(r.probability, describeResult(fixture, r)).to.be.below(50);
      }
    });
  }

  it('returns integer scores 0..100 and a one-frame clip is never frozen', function () {
    const fixture = manifest.cases.find((c) => c.kind === 'none')!;
    const clip = readVideoFrames(path.join(FIXTURES, fixture.id, 'clip.mp4'), 1);
    const r = analyseTamper(clip.frames, readImage(path.join(FIXTURES, fixture.id, 'reference.png')));
    for (const v of [r.probability, ...Object.values(r.causes)]) {
      expect(Number.isInteger(v)).to.equal(true);
      expect(v).to.be.within(0, 100);
    }
    expect(r.causes.frozen).to.equal(0);
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
    expect(messages.length).to.be.at.least(1);
  });

  it('rejects a clip of more than 25 frames with too_many_frames', async function () {
    const fixture = manifest.cases.find((c) => c.width === 320)!;
    const reference = path.join(FIXTURES, fixture.id, 'reference.png');
    const long = path.join(tmp, 'long.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-loop', '1', '-i', reference, '-frames:v', '30', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', long]);
    await expectAnalyticError(runKamcheck({ videoPath: long, imagePath: reference }, () => undefined), 'too_many_frames');
  });

  it('accepts exactly 25 frames', async function () {
    const fixture = manifest.cases.find((c) => c.width === 320)!;
    const reference = path.join(FIXTURES, fixture.id, 'reference.png');
    const clip = path.join(tmp, 'exact.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-loop', '1', '-i', reference, '-vf', 'noise=alls=4:allf=t', '-frames:v', '25', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
    const r = await runKamcheck({ videoPath: clip, imagePath: reference }, () => undefined);
    expect(r.probability).to.be.within(0, 100);
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
