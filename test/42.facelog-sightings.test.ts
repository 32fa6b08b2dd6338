// The sighting generator's rules on hand-made tracks: gaps, crossings, duplicates, re-appearance.
import { expect } from 'chai';
import { stitchTracks, MAX_GAP_SECONDS, MAX_SHRINK_RATIO, type TrackSummary } from '../lib/facelog/sightings/stitch.js';
import { decideGender } from '../lib/facelog/gender/aggregate.js';
import type { Box } from '../lib/facelog/types.js';

const FPS = 25;
const euclidean = (a: Float32Array, b: Float32Array) => Math.hypot(...a.map((x, i) => x - b[i]));

/** A face descriptor near one of a few orthogonal "identities" (distance between identities ~1.4). */
function person(id: number, jitter = 0): Float32Array {
  const v = new Float32Array(8);
  v[id] = 1;
  v[7] = jitter;
  return v;
}

/** A track moving linearly from box a at frame s to box b at frame e. */
function track(number: number, s: number, e: number, a: Box, b: Box, descriptors: Float32Array[]): TrackSummary {
  const at = (f: number): Box => {
    const t = e === s ? 0 : (f - s) / (e - s);
    return { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t, width: a.width + (b.width - a.width) * t, height: a.height + (b.height - a.height) * t };
  };
  return { number, startFrame: s, endFrame: e, firstBox: at(s), lastBox: at(e), boxAt: (f) => (f >= s && f <= e ? at(f) : undefined), descriptors };
}

const box = (x: number, y: number, w: number): Box => ({ x, y, width: w, height: w * 1.2 });

describe('sighting generator', () => {
  it('joins the two tracks of one person split by a short occlusion', () => {
    const groups = stitchTracks(
      [track(1, 0, 40, box(100, 100, 40), box(140, 120, 60), [person(0)]), track(2, 52, 90, box(150, 125, 62), box(200, 150, 90), [person(0, 0.1)])],
      { fps: FPS, distance: euclidean },
    );
    expect(groups).to.deep.equal([[1, 2]]);
  });

  it('keeps two people apart when their tracks overlap in time, even with similar faces', () => {
    const groups = stitchTracks(
      [track(1, 0, 60, box(50, 100, 50), box(400, 100, 60), [person(0)]), track(2, 10, 70, box(400, 110, 50), box(50, 110, 60), [person(0, 0.05)])],
      { fps: FPS, distance: euclidean },
    );
    expect(groups).to.have.length(2);
  });

  it('does not join different people one after the other at the same place', () => {
    const groups = stitchTracks(
      [track(1, 0, 40, box(100, 100, 40), box(140, 120, 60), [person(0)]), track(2, 45, 90, box(140, 120, 60), box(200, 150, 90), [person(1)])],
      { fps: FPS, distance: euclidean },
    );
    expect(groups).to.deep.equal([[1], [2]]);
  });

  it('does not join a face that left close to the camera with a much smaller one that appears next', () => {
    // Similar descriptors (distance 0.3): only the size tells the next person in the queue apart.
    const left = track(1, 0, 40, box(300, 100, 60), box(320, 300, 140), [person(0)]);
    const far = (w: number) => track(2, 60, 100, box(100, 100, w), box(150, 200, 120), [person(0, 0.3)]);
    expect(stitchTracks([left, far(140 / MAX_SHRINK_RATIO - 10)], { fps: FPS, distance: euclidean })).to.deep.equal([[1], [2]]);
    expect(stitchTracks([left, far(140 / MAX_SHRINK_RATIO + 10)], { fps: FPS, distance: euclidean })).to.deep.equal([[1, 2]]);
  });

  it('makes a new sighting when the person comes back after more than the longest gap', () => {
    const gap = Math.ceil((MAX_GAP_SECONDS + 1) * FPS);
    const groups = stitchTracks(
      [track(1, 0, 40, box(100, 100, 40), box(140, 120, 60), [person(0)]), track(2, 40 + gap, 80 + gap, box(140, 120, 60), box(200, 150, 90), [person(0)])],
      { fps: FPS, distance: euclidean },
    );
    expect(groups).to.deep.equal([[1], [2]]);
  });

  it('merges two tracks that followed the same face at the same time', () => {
    const groups = stitchTracks(
      [track(1, 0, 40, box(100, 100, 40), box(140, 120, 60), []), track(2, 5, 40, box(105, 102, 41), box(141, 121, 60), [])],
      { fps: FPS, distance: euclidean },
    );
    expect(groups).to.deep.equal([[1, 2]]);
  });

  it('without descriptors, links only a short gap at nearly the same place', () => {
    const near = stitchTracks(
      [track(1, 0, 30, box(100, 100, 30), box(110, 100, 32), []), track(2, 36, 60, box(112, 100, 32), box(120, 100, 34), [])],
      { fps: FPS, distance: euclidean },
    );
    expect(near).to.deep.equal([[1, 2]]);
    const far = stitchTracks(
      [track(1, 0, 30, box(100, 100, 30), box(110, 100, 32), []), track(2, 36, 60, box(400, 300, 32), box(420, 300, 34), [])],
      { fps: FPS, distance: euclidean },
    );
    expect(far).to.have.length(2);
  });
});

describe('gender aggregation', () => {
  it('weighs confident good faces over weak small ones and reports the chosen class probability', () => {
    const logit = (p: number) => Math.log(p / (1 - p));
    const d = decideGender([{ male: 0.9, weight: 0.8 }, { male: 0.3, weight: 0.1 }, { male: 0.4, weight: 0.1 }]);
    expect(d.gender).to.equal('male');
    // The weighted mean of the log-odds, back as a probability: 0.837.
    const male = 1 / (1 + Math.exp(-(0.8 * logit(0.9) + 0.1 * logit(0.3) + 0.1 * logit(0.4))));
    expect(d.confidence).to.be.closeTo(male, 1e-9);
    // One confident face outweighs three weak ones that an unweighted mean would follow.
    const outweighed = decideGender([{ male: 0.9, weight: 0.8 }, { male: 0.2, weight: 0.1 }, { male: 0.2, weight: 0.1 }, { male: 0.2, weight: 0.1 }]);
    expect(outweighed.gender).to.equal('male');
    // A female decision reports the probability of female.
    const female = decideGender([{ male: 0.2, weight: 1 }, { male: 0.4, weight: 1 }]);
    expect(female.gender).to.equal('female');
    expect(female.confidence).to.be.closeTo(1 - 1 / (1 + Math.exp(-(logit(0.2) + logit(0.4)) / 2)), 1e-9);
    expect(decideGender([{ male: 0.1, weight: 1 }]).gender).to.equal('female');
    expect(decideGender([])).to.deep.equal({ gender: '', confidence: -1 });
  });
});
