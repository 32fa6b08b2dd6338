// Scores a face log's sightings against a fixture's truth: one sighting per appearance, found by
// the overlap of their frame intervals. Pure functions: the benchmark and the tests call them with
// whatever the face log produced.
import { iou } from '../../lib/facelog/geometry.js';
import type { Gender } from './truth.js';

/** A face box in one frame. */
export interface FrameBox {
  frame: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What is scored of a sighting (the API's Sighting has these fields; gender "" when not classified). */
export interface PredictedSighting {
  start_frame: number;
  end_frame: number;
  gender?: string | null;
  /** Where its faces are (from the XML), when known: decides between people on screen together. */
  faces?: ReadonlyArray<FrameBox>;
}

/** What is needed of a truth appearance (a FacelogTruth's appearances fit). */
export interface TruthInterval {
  start_frame: number;
  end_frame: number;
  gender: Gender;
  boxes?: ReadonlyArray<FrameBox>;
}

/** 0.5: a sighting matches an appearance when their frame intervals overlap by at least half of their union. */
export const MATCH_IOU = 0.5;
/** 0.3: a sighting's face is on an appearance's face in a frame when their boxes overlap this much (IoU). */
export const PLACE_IOU = 0.3;
/** 0.5: a sighting is placed on an appearance when at least this share of its faces lie on the appearance's. */
export const PLACED_SHARE = 0.5;
/** 0.5: an unmatched sighting lying at least half inside an already matched appearance is a duplicate of it. */
export const DUPLICATE_OVERLAP = 0.5;

export interface GenderTally {
  /** Matched appearances of this true gender whose sighting has a gender. */
  classified: number;
  correct: number;
  /** correct / classified; null when none was classified. */
  accuracy: number | null;
}

export interface SightingScore {
  /** Appearances in the truth. */
  truth: number;
  /** Sightings predicted. */
  predicted: number;
  /** One-to-one matches. */
  matched: number;
  /** Unmatched sightings inside matched appearances (also counted against precision). */
  duplicates: number;
  /** matched / predicted (1 when nothing was predicted). */
  precision: number;
  /** matched / truth (1 when there is nothing to find). */
  recall: number;
  f1: number;
  /** duplicates / truth (0 when there is nothing to find). */
  duplicate_rate: number;
  /** Over matched appearances whose sighting has a gender, by true gender; never read one without the other. */
  gender: {
    male: GenderTally;
    female: GenderTally;
    /** All classified matches together; null when none. */
    accuracy: number | null;
    /** Mean of the two genders' accuracies (null unless both have classified matches). */
    balanced_accuracy: number | null;
  };
}

const length = (a: { start_frame: number; end_frame: number }) => a.end_frame - a.start_frame + 1;

/** Frames in both intervals (inclusive ends). */
export function overlapFrames(a: { start_frame: number; end_frame: number }, b: { start_frame: number; end_frame: number }): number {
  return Math.max(0, Math.min(a.end_frame, b.end_frame) - Math.max(a.start_frame, b.start_frame) + 1);
}

export function intervalIoU(a: { start_frame: number; end_frame: number }, b: { start_frame: number; end_frame: number }): number {
  const inter = overlapFrames(a, b);
  return inter === 0 ? 0 : inter / (length(a) + length(b) - inter);
}

const isGender = (g: unknown): g is Gender => g === 'male' || g === 'female';

/**
 * Share of the sighting's faces, in frames where the appearance has a face, that lie on that face
 * (IoU >= PLACE_IOU); null when either side has no boxes or they share no frame.
 */
export function placeAgreement(a: TruthInterval, s: PredictedSighting): number | null {
  if (!a.boxes || !s.faces) return null;
  const truthAt = new Map(a.boxes.map((b) => [b.frame, b]));
  let shared = 0;
  let on = 0;
  for (const f of s.faces) {
    const t = truthAt.get(f.frame);
    if (!t) continue;
    shared++;
    if (iou(f, t) >= PLACE_IOU) on++;
  }
  return shared ? on / shared : null;
}

/**
 * Matches `predicted` to the truth's appearances (greedy by interval IoU, best first, one-to-one,
 * pairs below MATCH_IOU never match) and counts. When the sightings carry their faces, pairs whose
 * faces lie mostly on the appearance's (PLACED_SHARE) come first: two people on screen over nearly the same frames give
 * two sightings with nearly the same interval, and the interval alone may pair each with the other
 * person (which scores both genders wrong). Whether a pair may match at all stays the interval's call. `truthOrAppearances`: a parsed <name>.truth.json
 * (FacelogTruth), or its appearances.
 */
export function scoreSightings(
  truthOrAppearances: { appearances: ReadonlyArray<TruthInterval> } | ReadonlyArray<TruthInterval>,
  predicted: ReadonlyArray<PredictedSighting>,
): SightingScore {
  const truth: ReadonlyArray<TruthInterval> = 'appearances' in truthOrAppearances ? truthOrAppearances.appearances : truthOrAppearances;
  const pairs: Array<{ t: number; p: number; iou: number; placed: number }> = [];
  truth.forEach((a, t) =>
    predicted.forEach((s, p) => {
      const overlap = intervalIoU(a, s);
      if (overlap >= MATCH_IOU) pairs.push({ t, p, iou: overlap, placed: (placeAgreement(a, s) ?? 1) >= PLACED_SHARE ? 1 : 0 });
    }),
  );
  // ties broken by order, so the result does not depend on the sort's stability
  pairs.sort((x, y) => y.placed - x.placed || y.iou - x.iou || x.t - y.t || x.p - y.p);
  const truthMatch = new Map<number, number>();
  const predMatched = new Set<number>();
  for (const { t, p } of pairs) {
    if (truthMatch.has(t) || predMatched.has(p)) continue;
    truthMatch.set(t, p);
    predMatched.add(p);
  }
  let duplicates = 0;
  predicted.forEach((s, p) => {
    if (predMatched.has(p)) return;
    const inMatched = [...truthMatch.keys()].some((t) => overlapFrames(truth[t], s) >= DUPLICATE_OVERLAP * length(s));
    if (inMatched) duplicates++;
  });
  const tally: Record<Gender, { classified: number; correct: number }> = { male: { classified: 0, correct: 0 }, female: { classified: 0, correct: 0 } };
  for (const [t, p] of truthMatch) {
    const said = predicted[p].gender;
    if (!isGender(said)) continue;
    tally[truth[t].gender].classified++;
    if (said === truth[t].gender) tally[truth[t].gender].correct++;
  }
  return summarise({ truth: truth.length, predicted: predicted.length, matched: truthMatch.size, duplicates, tally });
}

interface Counts {
  truth: number;
  predicted: number;
  matched: number;
  duplicates: number;
  tally: Record<Gender, { classified: number; correct: number }>;
}

function summarise(c: Counts): SightingScore {
  const precision = c.predicted ? c.matched / c.predicted : 1;
  const recall = c.truth ? c.matched / c.truth : 1;
  const ratio = (a: number, b: number) => (b ? a / b : null);
  const male = { ...c.tally.male, accuracy: ratio(c.tally.male.correct, c.tally.male.classified) };
  const female = { ...c.tally.female, accuracy: ratio(c.tally.female.correct, c.tally.female.classified) };
  return {
    truth: c.truth,
    predicted: c.predicted,
    matched: c.matched,
    duplicates: c.duplicates,
    precision,
    recall,
    f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0,
    duplicate_rate: c.truth ? c.duplicates / c.truth : 0,
    gender: {
      male,
      female,
      accuracy: ratio(male.correct + female.correct, male.classified + female.classified),
      balanced_accuracy: male.accuracy !== null && female.accuracy !== null ? (male.accuracy + female.accuracy) / 2 : null,
    },
  };
}

/** Pools the counts of several videos (e.g. all of one resolution) and recomputes the rates. */
export function combineScores(scores: ReadonlyArray<SightingScore>): SightingScore {
  const sum = (f: (s: SightingScore) => number) => scores.reduce((n, s) => n + f(s), 0);
  return summarise({
    truth: sum((s) => s.truth),
    predicted: sum((s) => s.predicted),
    matched: sum((s) => s.matched),
    duplicates: sum((s) => s.duplicates),
    tally: {
      male: { classified: sum((s) => s.gender.male.classified), correct: sum((s) => s.gender.male.correct) },
      female: { classified: sum((s) => s.gender.female.classified), correct: sum((s) => s.gender.female.correct) },
    },
  });
}
