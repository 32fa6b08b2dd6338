// The focus of a clip against what its encoder took (blur.ts smallDetailLost, scorer.ts
// COMPRESSION_EXCUSE): x264's quantisation takes small detail whole and keeps strong edges, a
// defocus takes both, so a clip's lost sharpness is excused as far as it bears the encoder's mark,
// and the blur cause's centre sits below what the encoder alone once took, and below what a
// slight defocus of flat panels takes from a clean clip. Cases of the bench's
// draws, each drawn alone exactly as in its set (testkit/kamcheck-fixtures/drawn.ts).
import { expect } from 'chai';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { measureTamper } from '../lib/kamcheck/measure.js';
import { COMPRESSED_FULL } from '../lib/kamcheck/scorer.js';
import { NIGHT_KINDS } from '../testkit/kamcheck-fixtures/cases.js';
import { readDrawnCase } from '../testkit/kamcheck-fixtures/drawn.js';
import { drawnCasesForSuite } from './helpers/drawn-cases.js';

/** Seed 31: x264 at CRF 48 over aero3.jpg at 320x240, 3.82 of its sharpness lost (-log2): blur 96 before its mark was read. */
const COMPRESSED = 'bench-281-heavy_compression-320x240';
/** Seed 13: sigma 1 px over vtest.avi at 320x240 (2 px at 640), 3.13 lost: blur 41 when the centre sat at 3.2, above what the encoder alone took. */
const SLIGHT_DEFOCUS_320 = 'bench-480-slight_defocus-320x240';
/** Seed 2: sigma 5.07 px over building.jpg's flat panels at 1280x720 (2.5 px at 640), 3.15 lost: blur 44 likewise. */
const SLIGHT_DEFOCUS_1280 = 'bench-494-slight_defocus-1280x720';
/** Seed 41, a later draw: sigma 1.39 px over building.jpg at 320x240 (2.8 px at 640), a clean clip (CRF 26), 2.75 lost: blur 43 with the centre at 2.8. */
const SLIGHT_DEFOCUS_FLAT = 'bench-481-slight_defocus-320x240';

describe('kamcheck focus, against what the encoder took', function () {
  this.timeout(300_000);
  const drawnCase = drawnCasesForSuite('kamcheck-focus-', [
    { seed: 31, kinds: ['heavy_compression'], ids: [COMPRESSED] },
    { seed: 13, kinds: NIGHT_KINDS, ids: [SLIGHT_DEFOCUS_320] },
    { seed: 2, kinds: NIGHT_KINDS, ids: [SLIGHT_DEFOCUS_1280] },
    { seed: 41, kinds: NIGHT_KINDS, ids: [SLIGHT_DEFOCUS_FLAT] },
  ]);

  function analyse(id: string) {
    const fixture = drawnCase(id);
    const { frames, reference } = readDrawnCase(fixture);
    const result = analyseTamper(frames, reference);
    const smallDetailLost = measureTamper(frames, reference).blur.smallDetailLost;
    return { result, smallDetailLost, said: `${id} (${fixture.scene}, crf ${fixture.crf}) ${JSON.stringify(fixture.params)}: small detail lost ${smallDetailLost}, p=${result.probability} ${JSON.stringify(result.causes)}` };
  }

  it("does not take a heavily compressed clip's lost detail for a defocus, by the encoder's mark", function () {
    const { result, smallDetailLost, said } = analyse(COMPRESSED);
    expect(smallDetailLost, said).to.be.at.least(COMPRESSED_FULL);
    expect(result.causes.blur, said).to.be.below(50);
    expect(result.probability, said).to.be.below(50);
  });

  it('finds a slight defocus, which bears no such mark, at the working width and above', function () {
    for (const id of [SLIGHT_DEFOCUS_320, SLIGHT_DEFOCUS_1280, SLIGHT_DEFOCUS_FLAT]) {
      const { result, smallDetailLost, said } = analyse(id);
      expect(smallDetailLost ?? 0, said).to.be.below(0.5);
      expect(result.causes.blur, said).to.be.at.least(50);
    }
  });
});
