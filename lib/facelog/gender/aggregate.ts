// One gender per sighting from the votes of its best faces: a quality-weighted mean of the
// classifier's log-odds, so one confident frontal face counts more than several small ones.
import type { GenderVote } from '../track-evidence.js';

export interface GenderDecision {
  gender: 'male' | 'female' | '';
  /** Probability of the reported gender, 0.5..1; -1 when not classified. */
  confidence: number;
}

/** Keeps log-odds finite for outputs of exactly 0 or 1. */
const EPSILON = 1e-4;

export function logOdds(probability: number): number {
  const p = Math.min(1 - EPSILON, Math.max(EPSILON, probability));
  return Math.log(p / (1 - p));
}

export function fromLogOdds(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

export function decideGender(votes: GenderVote[]): GenderDecision {
  const usable = votes.filter((v) => v.weight > 0);
  if (usable.length === 0) return { gender: '', confidence: -1 };
  let sum = 0;
  let weights = 0;
  for (const v of usable) {
    sum += v.weight * logOdds(v.male);
    weights += v.weight;
  }
  const male = fromLogOdds(sum / weights);
  return male >= 0.5 ? { gender: 'male', confidence: male } : { gender: 'female', confidence: 1 - male };
}
