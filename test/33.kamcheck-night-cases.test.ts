// The tamper check at night on hard cases of the bench's calibration draw (seed 2), each drawn
// alone exactly as in its set (generateFixtureSet's ids give the same reference and clip bytes):
// real scenes from the packages, the night's look, lights and noise, through x264. Each fails
// without one of the night's measures (docs/kamcheck.md, at night).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { generateFixtureSet } from '../testkit/kamcheck-fixtures/generate.js';
import { NIGHT_KINDS } from '../testkit/kamcheck-fixtures/cases.js';
import type { FixtureCase } from '../testkit/kamcheck-fixtures/manifest.js';

/** A third of the day's light, noise sigma 11, all of it gone after x264: a veiled region (99) unless the night lowers the veil's thresholds. */
const DARK_ENCODED = 'bench-581-night_dark-320x240';
/** Headlights through a 1920x1080 clip with noise sigma 13, against a day reference: blur 80 with the lit cells measured, 100 with the half-scale noise taken as half the working size's. */
const HEADLIGHTS = 'bench-638-headlights-1920x1080';
/** Slight defocus at night against a night reference (sigma 0.5% of the width, infrared and colour), which the working size misses and half of it finds. */
const SLIGHT_DEFOCUS = ['bench-527-night_defocus-640x480', 'bench-530-night_defocus-1280x720'];

describe('kamcheck at night, on cases of the calibration draw', function () {
  this.timeout(300_000);
  let dir: string;
  let cases: Map<string, FixtureCase>;

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kamcheck-night-'));
    const manifest = await generateFixtureSet('bench', dir, undefined, 2, NIGHT_KINDS, [DARK_ENCODED, HEADLIGHTS, ...SLIGHT_DEFOCUS]);
    cases = new Map(manifest.cases.map((c) => [c.id, c]));
    expect([...cases.keys()].sort()).to.deep.equal([DARK_ENCODED, HEADLIGHTS, ...SLIGHT_DEFOCUS].sort());
  });

  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function analyse(id: string) {
    const fixture = cases.get(id)!;
    const clip = readVideoFrames(path.join(dir, id, 'clip.mp4'), 26);
    const result = analyseTamper(clip.frames, readImage(path.join(dir, id, 'reference.png')));
    return { result, said: `${id} ${JSON.stringify(fixture.params)}: p=${result.probability} ${JSON.stringify(result.causes)}` };
  }

  it('does not read the contrast a dark, encoded night clip lost as a veil', function () {
    const { result, said } = analyse(DARK_ENCODED);
    expect(result.causes.masked, said).to.be.below(50);
    expect(result.probability, said).to.be.below(50);
  });

  it('judges focus under sweeping headlights by the cells they do not light', function () {
    const { result, said } = analyse(HEADLIGHTS);
    expect(result.causes.blur, said).to.be.below(50);
    expect(result.probability, said).to.be.below(50);
  });

  it('finds a slight defocus at night against a night reference', function () {
    for (const id of SLIGHT_DEFOCUS) {
      const { result, said } = analyse(id);
      expect(result.causes.blur, said).to.be.at.least(50);
    }
  });
});
