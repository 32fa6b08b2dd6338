// A new tone curve against a veil over the whole view (tone-curve.ts, veil.ts): a gamma that lifts
// the shadows flattens a bright scene's cells as a veil would, but keeps black and white where they
// were, so the contrast the view lost counts only beyond what that curve explains. A film's glare
// adds light, so its cells do not lie on such a curve, and it keeps its loss. Cases of the bench's
// draws, each drawn alone exactly as in its set (testkit/kamcheck-fixtures/drawn.ts).
import { expect } from 'chai';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { measureTamper } from '../lib/kamcheck/measure.js';
import { TINTED_VEIL_CALIBRATION } from '../lib/kamcheck/scorer.js';
import { TONE_FIT_FULL, TONE_FIT_NONE } from '../lib/kamcheck/tone-curve.js';
import { readDrawnCase } from '../testkit/kamcheck-fixtures/drawn.js';
import { drawnCasesForSuite } from './helpers/drawn-cases.js';

/** Seed 37: gamma 0.615 over aero3.jpg, a grey hazy aerial view, at 320x240: masked 76 while the view's whole loss counted (0.565 against a centre of 0.53). */
const GAMMA = 'bench-223-gamma-320x240';
/** Seed 7: a spray mist over aero3.jpg at 640x480 that brightens the view as a gamma of 0.86 would, but lifts its dark cells off the curve: caught by its tinted loss (0.45). */
const SPRAY_MIST = 'bench-409-spray_mist-640x480';

describe('kamcheck veil, against a new tone curve', function () {
  this.timeout(300_000);
  const drawnCase = drawnCasesForSuite('kamcheck-tone-', [
    { seed: 37, kinds: ['gamma'], ids: [GAMMA] },
    { seed: 7, kinds: ['spray_mist'], ids: [SPRAY_MIST] },
  ]);

  function analyse(id: string) {
    const fixture = drawnCase(id);
    const { frames, reference } = readDrawnCase(fixture);
    const result = analyseTamper(frames, reference);
    const { veil } = measureTamper(frames, reference);
    const said = `${id} (${fixture.scene}) ${JSON.stringify(fixture.params)}: tone curve ${JSON.stringify(veil.toneCurve)}, view lost ${veil.viewContrastLost}, tinted ${veil.tintedContrastLost}, p=${result.probability} ${JSON.stringify(result.causes)}`;
    return { fixture, result, veil, said };
  }

  it("fits a gamma's curve and does not take the contrast it explains for a veil", function () {
    const { fixture, result, veil, said } = analyse(GAMMA);
    expect(veil.toneCurve.residual, said).to.be.below(TONE_FIT_FULL);
    expect(veil.toneCurve.exponent, said).to.be.closeTo(Number(fixture.params.gamma), 0.05);
    expect(result.causes.masked, said).to.be.below(50);
    expect(result.probability, said).to.be.below(50);
  });

  it("keeps a spray mist's loss, whose cells lie off any such curve", function () {
    const { result, veil, said } = analyse(SPRAY_MIST);
    expect(veil.toneCurve.residual, said).to.be.above(TONE_FIT_NONE);
    expect(veil.tintedContrastLost, said).to.be.above(TINTED_VEIL_CALIBRATION.centre);
    expect(result.causes.masked, said).to.be.at.least(50);
  });
});
