// The sighting generator: stitches tracks of the same person into one sighting. A track breaks
// when the detector loses a face for a while (occlusion, a turned head, tracker drift); the next
// track of that person starts soon after, near where the last one ended, with the same face.
// Tracks are linked by appearance (face descriptors) together with time and position:
// - two tracks that overlap in time are different people, unless their boxes coincide (the
//   tracker followed one face twice); a track's time, place and size start where the detector
//   first found its face, since the frames it was followed back through before that are a guess;
// - a link spans at most MAX_GAP_SECONDS: a person who comes back later is a new sighting;
// - the face must not have jumped further than a walking person moves in the gap, nor be much
//   smaller than where the last track ended (at a pinch point people walk towards the camera);
// - descriptors must be closer than STITCH_JOIN_DISTANCE; without descriptors (faces too small
//   to describe) only a short gap at nearly the same place links;
// - a sighting is a chain: each track links to the one its person was seen in last before it.
import type { Box } from '../types.js';
import { centre, iou } from '../geometry.js';

export interface TrackSummary {
  number: number;
  startFrame: number;
  /** The frame of its first detection, where the track was followed back from there (track/backfill.ts); startFrame when absent. */
  detectedFrom?: number;
  endFrame: number;
  lastBox: Box;
  /** Boxes by frame, for finding duplicate tracks of one face. */
  boxAt(frame: number): Box | undefined;
  descriptors: readonly Float32Array[];
}

export interface StitchOptions {
  fps: number;
  distance: (a: Float32Array, b: Float32Array) => number;
}

/**
 * The stitcher's join threshold: two tracks' nearest descriptors must be closer than this to join.
 * Stricter than face-api's match threshold (0.6, FACE_API_MATCH_DISTANCE in
 * appearance/descriptor.ts): the margin keeps two people apart, while the same face seen at other
 * sizes and poses stays below ~0.45 on the fixtures.
 */
export const STITCH_JOIN_DISTANCE = 0.55;
/** Longest break inside one sighting; fixtures' re-appearances come back after 5 s or more. */
export const MAX_GAP_SECONDS = 3;
/** Without descriptors, tracks link only across a gap this short... */
const BLIND_MAX_GAP_SECONDS = 1;
/** ...and a size change of at most this ratio. */
const BLIND_MAX_SIZE_RATIO = 1.6;
/** How far a face may move during a gap, in face widths per second, plus one width of slack. */
const FACE_WIDTHS_PER_SECOND = 4;
/**
 * A track that starts this many times smaller than the previous one ended is someone further
 * away, not the same face. Measured on the bench set (two runs, 480p to 1080p): of the track
 * pairs of one person across a gap, the next track started at 0.65-1.07 times the width where the
 * first ended; of different people within 3 s of each other, the next started 1.61-4.7 times
 * smaller (the next person in a queue, still far from the camera). Someone who steps back during
 * a gap becomes two sightings.
 */
export const MAX_SHRINK_RATIO = 1.4;
/** Mean IoU over shared frames above which two overlapping tracks follow one face. */
const DUPLICATE_IOU = 0.5;
/** Frames two consecutive tracks of one person may share (KCF's last boxes and a new detection). */
const OVERLAP_SLACK_FRAMES = 2;

/** Groups of track numbers, one group per sighting, in order of first appearance. */
export function stitchTracks(tracks: TrackSummary[], options: StitchOptions): number[][] {
  const stitcher = new TrackStitcher(options);
  for (const t of tracks) stitcher.add(t);
  return stitcher.groups();
}

/** What the stitcher keeps of a track once no later track can pair with it. */
type Settled = Pick<TrackSummary, 'number' | 'startFrame' | 'detectedFrom' | 'endFrame' | 'boxAt'>;

/**
 * The sighting generator fed as tracks end, so that a long video's tracks need not keep their
 * descriptors to its end: a pair of tracks can be a duplicate or a link only when one starts at
 * most MAX_GAP_SECONDS after the other ended, so each pair is judged when its later track is
 * added, and a track's descriptors and boxes go once settle() says no track to come can start that
 * near it. groups() then joins the pairs found in the order stitchTracks has always used (by
 * start, then by link cost), so the groups do not depend on the order the tracks came in.
 */
export class TrackStitcher {
  /** Tracks a later track may still pair with. */
  private pending: TrackSummary[] = [];
  private readonly tracks: Settled[] = [];
  private readonly duplicates: { first: number; second: number }[] = [];
  private readonly links: { a: number; b: number; cost: number }[] = [];
  private readonly numbers = new Set<number>();

  constructor(private readonly options: StitchOptions) {}

  /** Adds an ended track (its boxes final) and judges it against the pending ones. */
  add(track: TrackSummary): void {
    if (this.numbers.has(track.number)) throw new Error(`track ${track.number} was already stitched`);
    this.numbers.add(track.number);
    for (const other of this.pending) {
      const [a, b] = byStart(other, track) < 0 ? [other, track] : [track, other];
      if (b.startFrame <= a.endFrame && meanOverlap(a, b) >= DUPLICATE_IOU) this.duplicates.push({ first: a.number, second: b.number });
      if (b.startFrame === a.startFrame) continue;
      const cost = linkCost(a, b, this.options);
      if (cost !== null) this.links.push({ a: a.number, b: b.number, cost });
    }
    this.pending.push(track);
    const { number, startFrame, detectedFrom, endFrame, boxAt } = track;
    this.tracks.push({ number, startFrame, detectedFrom, endFrame, boxAt });
  }

  /**
   * No track added from now on starts before `earliestStart`: the pending tracks that ended more
   * than MAX_GAP_SECONDS before it can pair with none of them, and are let go.
   */
  settle(earliestStart: number): void {
    const horizon = Math.ceil(MAX_GAP_SECONDS * this.options.fps) + 1;
    this.pending = this.pending.filter((t) => earliestStart - t.endFrame <= horizon);
  }

  /** Tracks whose descriptors the stitcher still holds. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Groups of the tracks added so far, one per sighting, in order of first appearance. */
  groups(): number[][] {
    const sorted = [...this.tracks].sort(byStart);
    const rank = new Map(sorted.map((t, i) => [t.number, i]));
    const byNumber = new Map(sorted.map((t) => [t.number, t]));
    const groups = new Map<number, Settled[]>(sorted.map((t) => [t.number, [t]]));
    const groupOf = new Map<number, number>(sorted.map((t) => [t.number, t.number]));
    const merge = (a: number, b: number) => {
      const ga = groupOf.get(a)!;
      const gb = groupOf.get(b)!;
      if (ga === gb) return;
      const members = groups.get(gb)!;
      groups.get(ga)!.push(...members);
      for (const m of members) groupOf.set(m.number, ga);
      groups.delete(gb);
    };

    // 1. Duplicates: one face followed by two overlapping tracks.
    const duplicates = [...this.duplicates].sort((x, y) => rank.get(x.first)! - rank.get(y.first)! || rank.get(x.second)! - rank.get(y.second)!);
    for (const { first, second } of duplicates) merge(first, second);

    // 2. Links across gaps, cheapest first, as long as each group stays one chain.
    const links = [...this.links].sort((x, y) => x.cost - y.cost || rank.get(x.a)! - rank.get(y.a)! || rank.get(x.b)! - rank.get(y.b)!);
    const paired = new Set([...this.links.map(({ a, b }) => pairKey(a, b)), ...this.duplicates.map(({ first, second }) => pairKey(first, second))]);
    for (const { a, b } of links) {
      const ga = groups.get(groupOf.get(a)!)!;
      const gb = groups.get(groupOf.get(b)!)!;
      if (ga === gb || overlapInTime(ga, gb) || !chained(ga, gb, paired)) continue;
      merge(a, b);
    }

    const startOf = (numbers: number[]) => Math.min(...numbers.map((n) => byNumber.get(n)!.startFrame));
    return [...groups.values()].map((g) => g.map((t) => t.number).sort((x, y) => x - y)).sort((x, y) => startOf(x) - startOf(y));
  }
}

/** The stitcher's order of tracks: by first frame, then by number. */
function byStart(a: Settled, b: Settled): number {
  return a.startFrame - b.startFrame || a.number - b.number;
}

/** The cost of saying b continues a's person, or null when it cannot. */
function linkCost(a: TrackSummary, b: TrackSummary, options: StitchOptions): number | null {
  const gapFrames = seenFrom(b) - a.endFrame;
  if (gapFrames < -OVERLAP_SLACK_FRAMES) return null;
  const gapSeconds = Math.max(0, gapFrames) / options.fps;
  if (gapSeconds > MAX_GAP_SECONDS) return null;
  // b's face where it was found, as its time counts from there: a box followed back before it is a guess
  const found = b.boxAt(seenFrom(b)) ?? b.boxAt(b.startFrame)!;
  const from = centre(a.lastBox);
  const to = centre(found);
  const width = Math.max(a.lastBox.width, found.width);
  const moved = Math.hypot(from.x - to.x, from.y - to.y) / width;
  if (moved > 1 + FACE_WIDTHS_PER_SECOND * gapSeconds) return null;
  if (a.lastBox.width > MAX_SHRINK_RATIO * found.width) return null;
  const positionCost = moved / (1 + FACE_WIDTHS_PER_SECOND * gapSeconds);

  if (a.descriptors.length && b.descriptors.length) {
    let best = Infinity;
    for (const x of a.descriptors) for (const y of b.descriptors) best = Math.min(best, options.distance(x, y));
    if (best >= STITCH_JOIN_DISTANCE) return null;
    return best + 0.1 * positionCost;
  }
  const sizeRatio = Math.max(a.lastBox.width, found.width) / Math.max(1, Math.min(a.lastBox.width, found.width));
  if (gapSeconds > BLIND_MAX_GAP_SECONDS || sizeRatio > BLIND_MAX_SIZE_RATIO) return null;
  return STITCH_JOIN_DISTANCE + positionCost; // after every link that has appearance evidence
}

function meanOverlap(a: Settled, b: Settled): number {
  const from = Math.max(a.startFrame, b.startFrame);
  const to = Math.min(a.endFrame, b.endFrame);
  let sum = 0;
  let n = 0;
  for (let f = from; f <= to; f++) {
    const x = a.boxAt(f);
    const y = b.boxAt(f);
    if (!x || !y) continue;
    sum += iou(x, y);
    n++;
  }
  return n ? sum / n : 0;
}

function pairKey(a: number, b: number): string {
  return a < b ? `${a},${b}` : `${b},${a}`;
}

/**
 * Whether two groups joined make one chain: wherever the person passes from one group's tracks to
 * the other's, the track seen last before the hand-over (or one overlapping it: a duplicate) pairs
 * with the track that takes over (or a duplicate of it). A link from a group's earlier track skips
 * where its person was seen since. On the night set (seed 5, night-05) a man's dark face was 39 px
 * wide where his first track ended and 74 px where his second ended; a woman's face that appeared
 * 1.6 s later at 43 px was 0.549 from his first track's descriptor, but too small to follow on
 * from his second track (MAX_SHRINK_RATIO).
 */
function chained(ga: Settled[], gb: Settled[], paired: Set<string>): boolean {
  const inA = new Set(ga.map((t) => t.number));
  const all = [...ga, ...gb].sort(byStart);
  const overlapping = (t: Settled) => all.filter((u) => inA.has(u.number) === inA.has(t.number) && u.startFrame <= t.endFrame && u.endFrame >= t.startFrame);
  let seenLast = all[0];
  for (const next of all.slice(1)) {
    if (inA.has(seenLast.number) !== inA.has(next.number)) {
      const before = overlapping(seenLast);
      const after = overlapping(next);
      if (!before.some((u) => after.some((v) => paired.has(pairKey(u.number, v.number))))) return false;
    }
    if (next.endFrame > seenLast.endFrame) seenLast = next;
  }
  return true;
}

function overlapInTime(a: Settled[], b: Settled[]): boolean {
  for (const x of a) {
    for (const y of b) {
      const shared = Math.min(x.endFrame, y.endFrame) - Math.max(seenFrom(x), seenFrom(y));
      if (shared >= OVERLAP_SLACK_FRAMES && meanOverlap(x, y) < DUPLICATE_IOU) return true;
    }
  }
  return false;
}

/**
 * Where a track's time starts for the stitcher: its first detection. The frames before it were
 * followed back by KCF (track/backfill.ts), at a size guessed from the first detections' growth:
 * on the night set (seed 4, night-14) a person's track ended at frame 64 as he went behind an
 * occluder; his new track, found at frame 75, was followed back to frame 57, over the last 8
 * frames of the first (a 58 px box guessed where the first track had him at 38 px), so the two
 * overlapped in time and made two sightings.
 */
function seenFrom(t: Settled): number {
  return t.detectedFrom ?? t.startFrame;
}
