// Where each detector run looks: the faces already tracked always (one small tile each, at their
// own scale), then within a budget of tiles (in 256 px model runs, as the detector's cost method
// counts them, FaceDetector.cost: smaller tiles cost in proportion to their area): on every other
// run a rotating share of the whole frame (so every part of it is searched every few seconds, also
// where nothing moves), then regions with motion: away from the tracked people first, then the
// motion searched longest ago (search-ages.ts), then the largest. A region costlier than the
// budget is cut into pieces that fit, searched over successive runs, stalest first; what does not
// fit waits for the next run, where it is staler. A whole 1080p frame at min_size 30 is 17 tiles.
// Why cut: a region skipped for not fitting whole usually does not fit in the next run either,
// so a person who appears behind a busy group (one region of 4.6 runs against a budget of 2-3)
// would be found only when the rotating whole-frame share reaches them, seconds later (test/39).
// Faces found late and faces in a track on the 1080p bench set are measured by
// `node build/scripts/bench-facelog.js [--seed N]` (docs/benchmarks.md).
// Measured with 256 px tiles only and a budget of 3 tiles, 1080p bench set: 0.90 model runs per
// frame (0.93 looking for tracked faces on every level). Not done, measured the same way:
// - a budget of 2 tiles: 0.65 runs per frame, but F1 0.92 instead of 1.00 and 84% of faces in a
//   track instead of 92%;
// - skipping motion regions searched in the last 3 runs: 0.84, and 1.6 points of face coverage
//   lost (busy scenes fill the budget anyway);
// - not looking at a region again on coarser levels once it fits whole in one tile: 0.86, but a
//   face sticks out of its motion region (only part of the head moved) and the finer level's tile
//   cuts it: test/45's crossing video lost half of a face's frames.
import type { Box, DetectOptions, TrackedFace } from '../types.js';
import type { FaceDetector } from './detector.js';
import { area, intersection } from '../geometry.js';
import { SearchAges } from './search-ages.js';

/**
 * 256 px model runs one detector run may cost, beyond the tracked faces (which are always looked
 * at): this share of a whole-frame search (17 runs at 1080p, 8 at 720p, 3 at 480p, min_size 30),
 * and at least MIN_TILES_PER_RUN. Measured on the bench set (seed 2) with small tiles and KCF at
 * 20x20: 720p with 2: F1 1.000, faces in a track 99.0%, 2.96x real time; with 3: 99.2%, 2.45x.
 * 1080p with 2: F1 0.967 (two appearances never found), 89.3%; with 3: F1 1.000, 97.1%, 1.85x;
 * with 4: 96.5%, 1.67x.
 */
export const TILES_PER_RUN_SHARE = 0.18;
export const MIN_TILES_PER_RUN = 2;
/** Tiles of the whole-frame search taken per run that takes one: the frame is covered every (its tiles / this * SCAN_EVERY) runs. */
export const SCAN_TILES_PER_RUN = 1;
/** Every how many runs one takes a share of the whole-frame search. */
export const SCAN_EVERY = 2;
/** A tracked person's body, as the scan schedule sees it: this many face widths to each side of the face... */
const PERSON_SIDE = 1;
/** ...and this many face heights below it. */
const PERSON_BELOW = 5;
/** A region is cut at most this many times over (into 2^MAX_CUTS pieces) to fit a run's budget. */
const MAX_CUTS = 4;

export class ScanSchedule {
  private readonly parts: number;
  /** 256 px model runs a detector run may cost beyond the tracked faces (a scan part takes SCAN_TILES_PER_RUN of it). */
  readonly budget: number;
  private next_ = 0;
  private run = 0;
  private readonly ages: SearchAges;

  /** Plans for `detector`, whose cost method (FaceDetector.cost) prices each candidate run. */
  constructor(
    private readonly detector: Pick<FaceDetector, 'cost'>,
    private readonly width: number,
    private readonly height: number,
    private readonly minSize: number,
  ) {
    // BlazeFace's whole-frame plan is a grid of 256 tiles: its cost is its tile count, which
    // scanPart shares out.
    const full = detector.cost(width, height, { minSize });
    this.parts = Math.max(1, Math.ceil(full / SCAN_TILES_PER_RUN));
    this.budget = Math.max(MIN_TILES_PER_RUN, TILES_PER_RUN_SHARE * full);
    this.ages = new SearchAges(width, height);
  }

  /**
   * Options for the next run, given the tracked faces and the regions with motion. Motion away
   * from the tracked people comes first: a moving region on a tracked face or the body below it
   * is most likely that face's own person, whom the face's own tile looks at; then the motion
   * searched longest ago (SearchAges), then the largest. A region costlier than the budget is
   * searched in pieces.
   */
  next(faces: TrackedFace[], moved: Box[]): DetectOptions {
    const run = this.run++;
    const scanning = run % SCAN_EVERY === 0;
    if (scanning && this.parts === 1) {
      // The whole frame fits the scan's share.
      this.ages.searched({ x: 0, y: 0, width: this.width, height: this.height }, run);
      return { minSize: this.minSize };
    }
    const scanPart = scanning ? { index: this.next_, of: this.parts } : undefined;
    if (scanPart) this.next_ = (this.next_ + 1) % this.parts;
    const cost = (regions: Box[]) => this.detector.cost(this.width, this.height, { minSize: this.minSize, regions });
    const budget = this.budget - (scanPart ? SCAN_TILES_PER_RUN : 0);
    const people = faces.map(personOf);
    // Of a region cut in pieces (several people merged), only the pieces on a tracked person wait.
    const candidates = moved.flatMap((r) =>
      piecesWithin(r, budget, cost).map((piece) => ({
        piece,
        nearFace: people.some((p) => intersection(piece, p) > 0),
        age: this.ages.age(piece, run),
      })),
    );
    candidates.sort((a, b) => Number(a.nearFace) - Number(b.nearFace) || b.age - a.age || area(b.piece) - area(a.piece));
    const regions: Box[] = [];
    for (const { piece } of candidates) if (cost([...regions, piece]) <= budget) regions.push(piece);
    for (const r of regions) this.ages.searched(r, run);
    return { minSize: this.minSize, faces, regions, scanPart };
  }
}

/** Where a tracked face's person moves: the face, a face width to each side, and the body below it. */
function personOf(face: Box): Box {
  return { x: face.x - PERSON_SIDE * face.width, y: face.y, width: face.width * (1 + 2 * PERSON_SIDE), height: face.height * (1 + PERSON_BELOW) };
}

/**
 * `region` cut in halves across its longer side, and those again, until each piece costs at most
 * `budget`: a region too large for one run is searched over several, stalest piece first. A face
 * on a cut lies whole in the tile of at least one side (a tile shows half a face of context
 * around its region, tiles.ts REGION_CONTEXT).
 */
function piecesWithin(region: Box, budget: number, cost: (regions: Box[]) => number, depth = 0): Box[] {
  if (depth >= MAX_CUTS || cost([region]) <= budget) return [region];
  const [a, b]: Box[] =
    region.width >= region.height
      ? [{ ...region, width: region.width / 2 }, { ...region, x: region.x + region.width / 2, width: region.width / 2 }]
      : [{ ...region, height: region.height / 2 }, { ...region, y: region.y + region.height / 2, height: region.height / 2 }];
  return [...piecesWithin(a, budget, cost, depth + 1), ...piecesWithin(b, budget, cost, depth + 1)];
}
