// Where each detector run looks (detect/scan-schedule.ts): within a budget of model runs, the
// motion searched longest ago first, a region too large for one run in pieces over several. The
// regions are those of a 1080p bench video (bench-42, seed 7) in which a person appears behind a
// busy group: their motion region costs 4.6 runs against a budget of 2-3, and a schedule that only
// searches regions whole never searches it while two pedestrians' regions keep taking the budget.
import { expect } from 'chai';
import { ScanSchedule, SCAN_TILES_PER_RUN } from '../lib/facelog/detect/scan-schedule.js';
import { planCost } from '../lib/facelog/detect/blazeface.js';
import { intersection } from '../lib/facelog/geometry.js';
import type { Box, DetectOptions } from '../lib/facelog/types.js';

const W = 1920;
const H = 1080;
const MIN_SIZE = 30;
/** Two pedestrians (0.81 runs each) and a person appearing behind a group (4.56 runs). */
const PEDESTRIAN_A: Box = { x: 366, y: 342, width: 162, height: 246 };
const PEDESTRIAN_B: Box = { x: 0, y: 372, width: 72, height: 234 };
const GROUP: Box = { x: 594, y: 198, width: 462, height: 600 };

/** The schedule plans for BlazeFace; its cost method is planCost, and planning needs no model. */
const detector = { cost: planCost };
const costOf = (opts: DetectOptions) => planCost(W, H, { minSize: MIN_SIZE, regions: opts.regions ?? [] });
const covers = (regions: Box[], p: { x: number; y: number }) => regions.some((r) => p.x >= r.x && p.x < r.x + r.width && p.y >= r.y && p.y < r.y + r.height);

describe('face log: detector scan schedule', () => {
  it('keeps every run within its budget, searching a region larger than the budget in pieces', () => {
    const scan = new ScanSchedule(detector, W, H, MIN_SIZE);
    expect(planCost(W, H, { minSize: MIN_SIZE, regions: [GROUP] })).to.be.greaterThan(scan.budget);
    const pieces: Box[] = [];
    for (let run = 0; run < 6; run++) {
      const opts = scan.next([], [PEDESTRIAN_A, PEDESTRIAN_B, GROUP]);
      const budget = scan.budget - (opts.scanPart ? SCAN_TILES_PER_RUN : 0);
      expect(costOf(opts), `run ${run}`).to.be.at.most(budget + 1e-9);
      for (const r of opts.regions ?? []) {
        const inside = [PEDESTRIAN_A, PEDESTRIAN_B, GROUP].some((m) => intersection(m, r) === r.width * r.height);
        expect(inside, `run ${run}: a searched region lies within a moving one`).to.equal(true);
      }
      pieces.push(...(opts.regions ?? []).filter((r) => intersection(r, GROUP) > 0));
    }
    // The group was looked at, in pieces smaller than itself (whole, it never fits).
    expect(pieces).to.not.be.empty;
    for (const p of pieces) expect(p.width * p.height).to.be.lessThan(GROUP.width * GROUP.height);
  });

  it('searches all of a large moving region within a few runs while smaller motion keeps moving beside it', () => {
    const scan = new ScanSchedule(detector, W, H, MIN_SIZE);
    const searched: Box[] = [];
    const pedestrianRuns = { a: 0, b: 0 };
    for (let run = 0; run < 6; run++) {
      const regions = scan.next([], [PEDESTRIAN_A, PEDESTRIAN_B, GROUP]).regions ?? [];
      searched.push(...regions.filter((r) => intersection(r, GROUP) > 0));
      if (regions.some((r) => intersection(r, PEDESTRIAN_A) > 0)) pedestrianRuns.a++;
      if (regions.some((r) => intersection(r, PEDESTRIAN_B) > 0)) pedestrianRuns.b++;
    }
    // Every point of the group's region on a 20 px grid, the head at its top included.
    for (let y = GROUP.y + 10; y < GROUP.y + GROUP.height; y += 20) {
      for (let x = GROUP.x + 10; x < GROUP.x + GROUP.width; x += 20) expect(covers(searched, { x, y }), `(${x}, ${y}) searched`).to.equal(true);
    }
    // The pedestrians still take their turns.
    expect(pedestrianRuns.a).to.be.at.least(2);
    expect(pedestrianRuns.b).to.be.at.least(2);
  });

  it('puts motion that waited before motion searched in the last run', () => {
    const scan = new ScanSchedule(detector, W, H, MIN_SIZE);
    const first = scan.next([], [PEDESTRIAN_A, PEDESTRIAN_B, GROUP]).regions ?? [];
    const second = scan.next([], [PEDESTRIAN_A, PEDESTRIAN_B, GROUP]).regions ?? [];
    const grid: { x: number; y: number }[] = [];
    for (let y = GROUP.y + 10; y < GROUP.y + GROUP.height; y += 20) for (let x = GROUP.x + 10; x < GROUP.x + GROUP.width; x += 20) grid.push({ x, y });
    // The first run could not afford all of the group; the second takes some of what it left out...
    const leftOut = grid.filter((p) => !covers(first, p));
    expect(leftOut.length).to.be.greaterThan(0);
    expect(leftOut.some((p) => covers(second, p))).to.equal(true);
    // ...and the pedestrian the first run searched waits, the other one takes its turn.
    const searchedFirst = [PEDESTRIAN_A, PEDESTRIAN_B].filter((m) => first.some((r) => intersection(r, m) > 0));
    expect(searchedFirst).to.have.length(1);
    expect(second.some((r) => intersection(r, searchedFirst[0]) > 0)).to.equal(false);
    const other = searchedFirst[0] === PEDESTRIAN_A ? PEDESTRIAN_B : PEDESTRIAN_A;
    expect(second.some((r) => intersection(r, other) > 0)).to.equal(true);
  });

  it('looks at motion near a tracked face last: that face has its own tile', () => {
    const scan = new ScanSchedule(detector, W, H, MIN_SIZE);
    scan.next([], []); // the first run takes a share of the whole-frame search
    const face = { x: PEDESTRIAN_A.x + 50, y: PEDESTRIAN_A.y + 10, width: 40, height: 40 };
    const opts = scan.next([face], [PEDESTRIAN_A, GROUP]);
    expect((opts.regions ?? []).some((r) => intersection(r, GROUP) > 0)).to.equal(true);
    expect((opts.regions ?? []).some((r) => intersection(r, PEDESTRIAN_A) > 0)).to.equal(false);
    expect(opts.faces).to.deep.equal([face]);
  });

  it('in a region of several people merged, lets only the pieces on a tracked person wait', () => {
    // bench-43 (seed 11, 1080p): a tracked face on the left; a second person, not yet found, walks
    // on the right; their motion and a pedestrian's merged into one region.
    const scan = new ScanSchedule(detector, W, H, MIN_SIZE);
    const face = { x: 560, y: 214, width: 58, height: 58 };
    const merged: Box = { x: 378, y: 120, width: 1146, height: 474 };
    const unseen = { x: 1290, y: 240 };
    let found = -1;
    for (let run = 0; run < 4 && found < 0; run++) {
      const regions = scan.next([face], [PEDESTRIAN_B, { x: 0, y: 600, width: 160, height: 240 }, merged]).regions ?? [];
      if (covers(regions, unseen)) found = run;
    }
    expect(found, 'runs until the second person is looked at').to.be.within(0, 2);
  });
});
