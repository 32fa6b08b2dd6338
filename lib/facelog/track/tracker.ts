// The tracker: turns per-frame detections into tracks. The detector runs every few frames; KCF
// follows each face in between. Rules:
// - association: a detection continues the live track whose predicted box it overlaps most
//   (IoU >= MATCH_IOU), or whose box centre is close for a face that moved fast; a lone face of
//   a track's size up to FAST_MATCH_DISTANCE away continues a track that found nothing closer;
// - birth: an unmatched detection starts a tentative track; it is confirmed, and numbered, once
//   the detector has found it `minDetections` times, and dropped if the detector misses it
//   TENTATIVE_MAX_MISSES times before that (a one-off false detection never becomes a track), or
//   CONFIDENT_TENTATIVE_MAX_MISSES times when the detector was sure of it;
// - death: a confirmed track ends after `maxMisses` detector runs in a row without its face, or
//   when it leaves the frame; its tracker-only tail from the first run that missed the face on is
//   cut off (see Track.trimTail).
// It is the face log's FaceTracker (face-tracker.ts).
import type { Box, FaceDetection } from '../types.js';
import type { FaceSpill } from './face-spill.js';
import { area, centre, clip, iou } from '../geometry.js';
import { FaceKcf, type FramePyramid } from './kcf.js';
import { Track } from './track.js';
import type { FaceTracker } from './face-tracker.js';

/** Least overlap between a detection and a track's predicted box for them to be the same face. */
const MATCH_IOU = 0.3;
/**
 * Without overlap, a detection still continues a track whose centre is this close (in face widths
 * of the larger box)... Faces near the camera cross a fifth of their width per frame when people
 * turn to leave (the fixtures exit sweep), over a face width between two detector runs.
 */
const MATCH_CENTRE_DISTANCE = 1.2;
/** ...and whose size is within this ratio. */
const MATCH_SIZE_RATIO = 1.5;
/**
 * A person turning to leave close to the camera crosses two thirds of a face width per frame, over
 * three between two detector runs (bench-43 at 1080p: 84 px a frame for a 126 px face): beyond KCF
 * and the match distance. A confirmed track the last run found, with no other match, continues
 * with a lone unmatched detection of about its size this many face widths from its last
 * detection, when neither has another candidate.
 */
const FAST_MATCH_DISTANCE = 3.5;
const FAST_MATCH_SIZE_RATIO = 1.25;
/** A tentative track is dropped when the detector misses it this many runs in a row... */
const TENTATIVE_MAX_MISSES = 2;
/**
 * ...or this many, once the detector has scored it CONFIDENT_TENTATIVE_SCORE or more. A dark face
 * at night is found in one run and missed in the next two more often than by day, and each drop
 * starts its track over. On the face-log night set's `dark` videos (seeds 3-6, 76 people,
 * `bench-facelog --set night --detectable`), against 2 misses for every tentative track: people
 * in a track within 10 frames of the first whole-frame detection 75 against 74, within 10
 * frames of reaching 30 px 72 against 71, faces >= 30 px in no track 273 against 299, face records
 * on no face 818 against 806 (the whole night sets, 136 videos: 2952 against 2858, docs/benchmarks.md).
 * 3 misses for every tentative track lost a person that this keeps (seed 4, night-23: a third
 * person never tracked). By day the bench set's sightings and faces in a track are unchanged.
 */
const CONFIDENT_TENTATIVE_MAX_MISSES = 3;
/** The score that lets a tentative track miss more runs; the detector reports faces from 0.5 (detect/tile-runtime.ts, MIN_SCORE). */
const CONFIDENT_TENTATIVE_SCORE = 0.6;
/** A tracked box with less than this share inside the frame has left it. */
const MIN_VISIBLE_SHARE = 0.5;

export interface TrackerOptions {
  width: number;
  height: number;
  /** Detections needed to confirm a track (1 for a still image). */
  minDetections: number;
  /** Detector runs without the face after which a confirmed track ends. */
  maxMisses: number;
  /** Where ended tracks' face records go (track/face-spill.ts); kept in memory without one. */
  spill?: FaceSpill;
}

export class KcfTracker implements FaceTracker {
  /** Confirmed tracks and the live tentative ones, in order of birth (tentative ones have number 0). */
  readonly tracks: Track[] = [];
  private live: Track[] = [];
  private readonly kcf = new Map<Track, FaceKcf | null>();
  private nextNumber = 1;
  private nextKey = 1;

  constructor(private readonly options: TrackerOptions) {}

  get liveTracks(): readonly Track[] {
    return this.live;
  }

  get maxMisses(): number {
    return this.options.maxMisses;
  }

  /**
   * Advances every live track to `frame`. `detections` is the detector's output for this frame,
   * or null on frames where the detector did not run. Returns the tracks confirmed in this step.
   */
  step(frame: number, pyramid: FramePyramid, detections: FaceDetection[] | null): Track[] {
    const predicted = new Map<Track, Box | null>();
    for (const track of this.live) predicted.set(track, this.predict(track, pyramid));

    if (detections === null) {
      for (const track of this.live) {
        const box = predicted.get(track);
        if (box) track.addTracked(frame, box);
      }
      this.live = this.live.filter((t) => !this.endIfLeft(t, frame, predicted.get(t) ?? null));
      return [];
    }

    const { matches, fast } = this.associate(detections, predicted, frame);
    const matchedTracks = new Set<Track>();
    const matchedDetections = new Set<number>();
    const confirmed: Track[] = [];
    for (const [track, d] of matches) {
      const detection = detections[d];
      if (fast.has(track)) {
        // KCF did not follow a face this fast: its boxes since the last detection are replaced by
        // a straight line from there to here.
        track.trimToLastDetection();
        track.addDetection(frame, detection);
      } else {
        track.addDetection(frame, detection, predicted.get(track));
      }
      this.kcf.set(track, new FaceKcf(pyramid, detection.box));
      matchedTracks.add(track);
      matchedDetections.add(d);
      if (!track.confirmed && track.detections.length >= this.options.minDetections) {
        track.number = this.nextNumber++;
        confirmed.push(track);
      }
    }

    for (const track of this.live) {
      if (matchedTracks.has(track)) continue;
      track.addMiss(frame);
      const box = predicted.get(track);
      if (box) track.addTracked(frame, box);
      const limit = track.confirmed ? this.options.maxMisses : tentativeMaxMisses(track);
      if (this.hasLeft(box ?? null)) this.end(track, frame);
      else if (track.misses >= limit) this.end(track);
    }

    detections.forEach((detection, d) => {
      if (matchedDetections.has(d)) return;
      // A second detection of a face that already has a track (overlapping boxes) is not a new face.
      if (this.live.some((t) => !t.ended && iou(t.lastBox, detection.box) >= MATCH_IOU)) return;
      const track = new Track(this.nextKey++);
      track.addDetection(frame, detection);
      this.kcf.set(track, new FaceKcf(pyramid, detection.box));
      if (this.options.minDetections <= 1) {
        track.number = this.nextNumber++;
        confirmed.push(track);
      }
      this.tracks.push(track);
      this.live.push(track);
    });
    this.live = this.live.filter((t) => !t.ended);
    return confirmed;
  }

  /** Ends every live track (end of the video). */
  finish(): void {
    for (const track of this.live) this.end(track);
    this.live = [];
  }

  confirmedTracks(): Track[] {
    return this.tracks.filter((t) => t.confirmed).sort((a, b) => a.number - b.number);
  }

  private predict(track: Track, pyramid: FramePyramid): Box | null {
    const kcf = this.kcf.get(track);
    if (!kcf) return null;
    const box = kcf.update(pyramid);
    if (!box) this.kcf.set(track, null);
    return box;
  }

  /** Greedy one-to-one matching, best overlap first; then the fast faces (matchFastFaces). */
  private associate(detections: FaceDetection[], predicted: Map<Track, Box | null>, frame: number): { matches: Map<Track, number>; fast: Set<Track> } {
    const pairs: { track: Track; d: number; score: number }[] = [];
    for (const track of this.live) {
      const kcf = predicted.get(track);
      const moving = track.extrapolate(frame);
      detections.forEach((detection, d) => {
        // KCF's box, or where the face's own motion takes it (KCF loses fast faces).
        const score = Math.max(kcf ? matchScore(kcf, detection.box) : 0, matchScore(moving, detection.box));
        if (score > 0) pairs.push({ track, d, score });
      });
    }
    pairs.sort((a, b) => b.score - a.score);
    const result = new Map<Track, number>();
    const used = new Set<number>();
    for (const { track, d } of pairs) {
      if (result.has(track) || used.has(d)) continue;
      result.set(track, d);
      used.add(d);
    }
    const fast = this.matchFastFaces(detections, predicted, result, used);
    return { matches: result, fast };
  }

  /** The second pass for faces that left KCF and the match distance behind (FAST_MATCH_DISTANCE). */
  private matchFastFaces(detections: FaceDetection[], predicted: Map<Track, Box | null>, result: Map<Track, number>, used: Set<number>): Set<Track> {
    const fast = new Set<Track>();
    const others = this.live.flatMap((t) => [t.lastBox, ...(predicted.get(t) ? [predicted.get(t)!] : [])]);
    const free = detections.map((_, d) => d).filter((d) => !used.has(d) && !others.some((b) => iou(b, detections[d].box) >= MATCH_IOU));
    const candidates = this.live
      .filter((t) => t.confirmed && t.misses === 0 && !result.has(t))
      .map((track) => ({ track, near: free.filter((d) => isFastMatch(track.detections[track.detections.length - 1].box, detections[d].box)) }));
    for (const { track, near } of candidates) {
      if (near.length !== 1) continue;
      // The detection must be this track's only candidate, and the track its only one.
      if (candidates.some((c) => c.track !== track && c.near.includes(near[0]))) continue;
      result.set(track, near[0]);
      used.add(near[0]);
      fast.add(track);
    }
    return fast;
  }

  private hasLeft(box: Box | null): boolean {
    if (!box || area(box) === 0) return false;
    return area(clip(box, this.options.width, this.options.height)) < MIN_VISIBLE_SHARE * area(box);
  }

  private endIfLeft(track: Track, frame: number, box: Box | null): boolean {
    if (!this.hasLeft(box)) return false;
    this.end(track, frame);
    return true;
  }

  /** Ends a track; `leftAt` is the frame where it left the frame. */
  private end(track: Track, leftAt?: number): void {
    track.ended = true;
    track.trimTail(leftAt);
    this.kcf.delete(track);
    // A dropped tentative track is forgotten, so a long video's false detections cost no memory;
    // a confirmed one is kept to the end of the job, packed.
    if (!track.confirmed) this.tracks.splice(this.tracks.indexOf(track), 1);
    else track.pack(this.options.spill);
  }
}

/** Distance between two boxes' centres in widths of the larger, and the ratio of their widths (>= 1). */
function apart(a: Box, b: Box): { distance: number; ratio: number } {
  const ca = centre(a);
  const cb = centre(b);
  const width = Math.max(a.width, b.width);
  return { distance: Math.hypot(ca.x - cb.x, ca.y - cb.y) / width, ratio: width / Math.max(1, Math.min(a.width, b.width)) };
}

function isFastMatch(last: Box, detection: Box): boolean {
  const { distance, ratio } = apart(last, detection);
  return ratio <= FAST_MATCH_SIZE_RATIO && distance <= FAST_MATCH_DISTANCE;
}

/** How well a detection continues a track's box: IoU, or a weaker score for a close, similar-sized face. */
function matchScore(track: Box, detection: Box): number {
  const overlap = iou(track, detection);
  if (overlap >= MATCH_IOU) return overlap;
  const { distance, ratio } = apart(track, detection);
  if (distance <= MATCH_CENTRE_DISTANCE && ratio <= MATCH_SIZE_RATIO) return (MATCH_IOU * (1 - distance / MATCH_CENTRE_DISTANCE)) / 2;
  return 0;
}

/** Detector runs in a row a tentative track may miss before it is dropped. */
function tentativeMaxMisses(track: Track): number {
  return track.detections.some((d) => d.score >= CONFIDENT_TENTATIVE_SCORE) ? CONFIDENT_TENTATIVE_MAX_MISSES : TENTATIVE_MAX_MISSES;
}
