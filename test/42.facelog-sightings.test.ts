// The sighting generator's rules on hand-made tracks: gaps, crossings, duplicates, re-appearance.
import { expect } from 'chai';
import { stitchTracks, TrackStitcher, MAX_GAP_SECONDS, MAX_SHRINK_RATIO, type TrackSummary } from '../lib/facelog/sightings/stitch.js';
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
  return { number, startFrame: s, endFrame: e, lastBox: at(e), boxAt: (f) => (f >= s && f <= e ? at(f) : undefined), descriptors };
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

  it("links a later track only from where the person was seen last, not past a group's later track", () => {
    // Track 2 continues track 1 (same place, the face now twice as large). Track 3's face is close
    // to track 1's in descriptor and size, but far too small to follow on from track 2.
    const first = track(1, 0, 29, box(150, 140, 42), box(160, 146, 40), [person(0)]);
    const second = (d: number) => track(2, 30, 49, box(140, 125, 80), box(150, 148, 75), [person(0, d)]);
    const next = (d: number) => track(3, 89, 169, box(110, 115, 43), box(90, 120, 128), [person(0, d)]);
    expect(stitchTracks([first, second(0.1), next(0.5)], { fps: FPS, distance: euclidean })).to.deep.equal([[1, 2], [3]]);
    // The same when the link 1-3 is the cheaper one and is taken first: 1-2 would then put track 2
    // between them, and 2-3 is no link.
    expect(stitchTracks([first, second(0.45), next(0.3)], { fps: FPS, distance: euclidean })).to.have.length(2);
    // Without track 2, track 3 follows on from track 1.
    expect(stitchTracks([first, next(0.5)], { fps: FPS, distance: euclidean })).to.deep.equal([[1, 3]]);
  });

  it("counts a track's time from its first detection, not from the frames it was followed back through", () => {
    // One person behind an occluder: track 1 ends at 64; track 2 is found at 75 and followed back
    // to 57, its guessed box larger than track 1's there (no duplicate).
    const before = track(1, 10, 64, box(320, 103, 34), box(335, 118, 38), [person(0)]);
    const after = (detectedFrom?: number) => ({ ...track(2, 57, 124, box(372, 122, 58), box(360, 120, 216), [person(0, 0.3)]), detectedFrom });
    expect(stitchTracks([before, after(75)], { fps: FPS, distance: euclidean })).to.deep.equal([[1, 2]]);
    // Found by the detector at 57, the two overlap: two people.
    expect(stitchTracks([before, after(57)], { fps: FPS, distance: euclidean })).to.deep.equal([[1], [2]]);
    expect(stitchTracks([before, after()], { fps: FPS, distance: euclidean })).to.deep.equal([[1], [2]]);
  });

  it('judges where a track\'s face was found, not the box guessed for the frames it was followed back through', () => {
    // Track 1 ends at 60 with a 100 px face; track 2 finds 95 px of it nearby at 70, and was
    // followed back to 50 at a size guessed from its growth, 60 px: 1.4 times smaller would be
    // someone further away (MAX_SHRINK_RATIO).
    const before = track(1, 10, 60, box(200, 80, 70), box(300, 100, 100), [person(0)]);
    const guessed = box(330, 130, 60);
    const found = box(305, 105, 95);
    const after: TrackSummary = {
      number: 2, startFrame: 50, detectedFrom: 70, endFrame: 120, lastBox: box(320, 140, 130),
      boxAt: (f) => (f < 50 || f > 120 ? undefined : f < 70 ? guessed : found),
      descriptors: [person(0, 0.3)],
    };
    expect(stitchTracks([before, after], { fps: FPS, distance: euclidean })).to.deep.equal([[1, 2]]);
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

describe('sighting generator fed as tracks end', () => {
  // A queue: each person's face breaks into two tracks across a short occlusion, the next person
  // close behind (their tracks overlap in time), and one track that followed a face twice.
  const queue = () => {
    const tracks: TrackSummary[] = [];
    for (let p = 0; p < 6; p++) {
      const s = p * 60;
      tracks.push(track(3 * p + 1, s, s + 40, box(100 + 10 * p, 100, 40), box(140, 120, 60), [person(p % 7)]));
      tracks.push(track(3 * p + 2, s + 52, s + 90, box(150, 125, 62), box(200, 150, 90), [person(p % 7, 0.1)]));
      if (p === 2) tracks.push(track(3 * p + 3, s + 5, s + 40, box(112, 102, 41), box(141, 121, 60), []));
    }
    return tracks;
  };

  it('groups tracks whatever order they end in, as the whole video at once does', () => {
    const whole = stitchTracks(queue(), { fps: FPS, distance: euclidean });
    expect(whole).to.deep.equal([[1, 2], [4, 5], [7, 8, 9], [10, 11], [13, 14], [16, 17]]);
    for (const order of [[...queue()].sort((a, b) => a.endFrame - b.endFrame), [...queue()].reverse()]) {
      const stitcher = new TrackStitcher({ fps: FPS, distance: euclidean });
      for (const t of order) stitcher.add(t);
      expect(stitcher.groups()).to.deep.equal(whole);
    }
  });

  it('lets a track go only once no track to come can start within the longest gap of its end', () => {
    const horizon = Math.ceil(MAX_GAP_SECONDS * FPS);
    const stitcher = new TrackStitcher({ fps: FPS, distance: euclidean });
    const first = track(1, 0, 40, box(100, 100, 40), box(140, 120, 60), [person(0)]);
    stitcher.add(first);
    // The next track may start right at the longest gap: the first one waits for it.
    stitcher.settle(40 + horizon);
    expect(stitcher.pendingCount).to.equal(1);
    stitcher.add(track(2, 40 + horizon, 80 + horizon, box(150, 125, 62), box(200, 150, 90), [person(0, 0.1)]));
    expect(stitcher.groups()).to.deep.equal([[1, 2]]);
    // Past that, both go; what they were paired with stays.
    stitcher.settle(80 + 2 * horizon + 2);
    expect(stitcher.pendingCount).to.equal(0);
    expect(stitcher.groups()).to.deep.equal([[1, 2]]);
    expect(() => stitcher.add(first)).to.throw(/already/);
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
