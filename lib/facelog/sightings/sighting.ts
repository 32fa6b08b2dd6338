// Sightings as the API reports them, built from stitched tracks.
import { randomUUID } from 'node:crypto';
import { KEPT_SCORES, type Track } from '../track/track.js';
import type { TrackEvidence } from '../track-evidence.js';
import { decideGender } from '../gender/aggregate.js';
import { stillEvidence } from '../detect/still-evidence.js';

export interface Sighting {
  sighting_id: string;
  start_frame: number;
  end_frame: number;
  /** Frames in which the person's face is recorded (detected or tracked). */
  frames: number;
  confidence: number;
  gender: string;
  gender_confidence: number;
  /** File name of the thumbnail in the job's results; the API turns it into a link. */
  thumbnail: string;
  /** Track numbers, for the XML. */
  tracks: number[];
}

/** Detections after which a sighting's confidence is no longer held back by its length. */
const DETECTIONS_FOR_FULL_CONFIDENCE = 4;
/** Best detector scores averaged into a sighting's confidence (an ended track keeps as many). */
const TOP_SCORES = KEPT_SCORES;

/**
 * How sure the detector was of a sighting's face: the mean of its TOP_SCORES best detector scores
 * (0.5..1, the detector reports nothing below 0.5).
 */
export function bestScores(tracks: Track[]): number {
  const top = tracks.flatMap((t) => t.bestScores()).sort((a, b) => b - a).slice(0, TOP_SCORES);
  return top.reduce((s, x) => s + x, 0) / Math.max(1, top.length);
}

/**
 * A still's sighting: the best evidence of its detections (detect/still-evidence.ts: the mean score
 * over the still's views, 0 where a view missed the face); undefined for a video's.
 */
export function stillConfidence(tracks: Track[]): number | undefined {
  const detections = tracks.flatMap((t) => t.viewedDetections());
  return detections.length ? Math.max(...detections.map(stillEvidence)) : undefined;
}

export function buildSighting(
  tracks: Track[],
  evidence: (t: Track) => TrackEvidence,
  genderRequested: boolean,
): Omit<Sighting, 'thumbnail'> {
  const id = randomUUID();
  const detections = tracks.reduce((n, t) => n + t.detectionCount, 0);
  // Confidence: how sure the detector was of the face, discounted for a sighting seen only a
  // few times (a short sighting is more likely a false detection).
  // A still's: the evidence of its views (each a look of the detector again, as a later frame is).
  const confidence = stillConfidence(tracks) ?? bestScores(tracks) * (1 - Math.exp(-detections / DETECTIONS_FOR_FULL_CONFIDENCE));
  const gender = genderRequested ? decideGender(tracks.flatMap((t) => evidence(t).genderVotes)) : { gender: '', confidence: -1 };
  return {
    sighting_id: id,
    start_frame: Math.min(...tracks.map((t) => t.startFrame)),
    end_frame: Math.max(...tracks.map((t) => t.endFrame)),
    frames: framesSeen(tracks),
    confidence: round3(confidence),
    gender: gender.gender,
    gender_confidence: gender.confidence < 0 ? -1 : round3(gender.confidence),
    tracks: tracks.map((t) => t.number).sort((a, b) => a - b),
  };
}

/**
 * Frames in which any of the tracks has a face. Read from the tracks' frame numbers, not their
 * face records: an ended track's records are packed (track/packed-faces.ts), and making them
 * objects again only to count them would allocate every record of a long job at its end (179038
 * for 2 hours of the 1080p bench video).
 */
function framesSeen(tracks: readonly Track[]): number {
  const frames = new Set<number>();
  for (const t of tracks) for (let i = 0; i < t.faceCount; i++) frames.add(t.frameAt(i));
  return frames.size;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
