// A small turn of the camera against the encoder's chance fits (shift.ts supportedDisplacement,
// scorer.ts MOVED_CALIBRATION): a turn of 1.5 degrees moves the view's corners by 1.5% of its
// width, and its fit holds dozens of inliers; a heavily compressed clip can fit its own blocks to
// a turn as large with the fewest inliers a fit may have, and counts only in proportion to them.
// Cases of the bench's draws, each drawn alone exactly as in its set (testkit/kamcheck-fixtures/drawn.ts).
import { expect } from 'chai';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { measureTamper } from '../lib/kamcheck/measure.js';
import { MOVED_CALIBRATION } from '../lib/kamcheck/scorer.js';
import { TAMPERED_AT } from '../lib/cameras/sensitivity.js';
import { SHIFT_WEAK_INLIERS } from '../lib/kamcheck/shift.js';
import { NIGHT_KINDS } from '../testkit/kamcheck-fixtures/cases.js';
import { readDrawnCase } from '../testkit/kamcheck-fixtures/drawn.js';
import { drawnCasesForSuite } from './helpers/drawn-cases.js';

/** Seed 41: box_in_scene.png at 1280x720 turned by 1.55 degrees: corners 0.0153 of the width, 197 inliers; moved 29 with the centre at 0.018. */
const TURN_1280 = 'bench-511-moved_slight-1280x720';
/** Seed 37: vtest.avi at 1280x720 turned by 1.62 degrees: 0.0151, 71 inliers; moved 28 likewise. */
const TURN_VTEST = 'bench-510-moved_slight-1280x720';
/** Seed 37: aero3.jpg at 320x240 through x264 at CRF 46, fitted to a 1.2 degree turn (0.0138) with 12 inliers: moved 63 at the new centre counted in full. */
const COMPRESSED = 'bench-284-heavy_compression-320x240';

/** The moved cause's centre before the inliers' weight: these turns read under it. */
const OLD_CENTRE = 0.018;

describe('kamcheck small turns, against chance fits', function () {
  this.timeout(300_000);
  const drawnCase = drawnCasesForSuite('kamcheck-turn-', [
    { seed: 41, kinds: NIGHT_KINDS, ids: [TURN_1280] },
    { seed: 37, kinds: NIGHT_KINDS, ids: [TURN_VTEST] },
    { seed: 37, kinds: ['heavy_compression'], ids: [COMPRESSED] },
  ]);

  function analyse(id: string) {
    const fixture = drawnCase(id);
    const { frames, reference } = readDrawnCase(fixture);
    const result = analyseTamper(frames, reference);
    const shift = measureTamper(frames, reference).shift;
    return { result, shift, said: `${id} (${fixture.scene}, crf ${fixture.crf}) ${JSON.stringify(fixture.params)}: displacement ${shift.displacement.toFixed(4)}, ${shift.inliers} inliers, p=${result.probability} ${JSON.stringify(result.causes)}` };
  }

  it('finds a turn of 1.5 degrees, which a well-held fit measures', function () {
    for (const id of [TURN_1280, TURN_VTEST]) {
      const { result, shift, said } = analyse(id);
      expect(shift.inliers, said).to.be.at.least(SHIFT_WEAK_INLIERS);
      expect(shift.displacement, said).to.be.below(OLD_CENTRE);
      expect(result.causes.moved, said).to.be.at.least(50);
    }
  });

  it("does not take the encoder's chance fit with few inliers for a turn", function () {
    const { result, shift, said } = analyse(COMPRESSED);
    // the fit itself reads as a turn, past the centre: only its few inliers keep it quiet
    expect(shift.inliers, said).to.be.below(SHIFT_WEAK_INLIERS);
    expect(shift.displacement, said).to.be.above(MOVED_CALIBRATION.centre);
    expect(result.causes.moved, said).to.be.below(TAMPERED_AT.high);
    expect(result.probability, said).to.be.below(TAMPERED_AT.high);
  });
});
