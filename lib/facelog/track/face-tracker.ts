// The face log's tracking stage: turns the detector's faces, found every few frames, into tracks
// that follow each face through every frame. The frame loop (analyse.ts) steps it once a frame.
// Implementation: tracker.ts (KCF between detector runs). Tests can plug in a fake.
import type { FaceDetection } from '../types.js';
import type { FramePyramid } from './kcf.js';
import type { Track } from './track.js';

export interface FaceTracker {
  /**
   * Advances every live track to `frame` (frames come in order, each once). `detections` are the
   * detector's faces in this frame, or null where the detector did not run. Returns the tracks
   * confirmed in this step: from now on they are reported, with a number.
   */
  step(frame: number, pyramid: FramePyramid, detections: FaceDetection[] | null): Track[];
  /** Ends every live track: the video is over. */
  finish(): void;
  /** Confirmed tracks and the live tentative ones, in order of birth (tentative ones have number 0). */
  readonly tracks: readonly Track[];
  /** Tracks that have not ended: those the detector looks for again at its next run. */
  readonly liveTracks: readonly Track[];
  /** Every confirmed track, ended or not, by number. */
  confirmedTracks(): Track[];
  /**
   * Detector runs without its face after which a confirmed track ends. The frame loop holds each
   * frame back this many runs, and the runs a tentative track needs, before drawing it: by then
   * no track in it changes.
   */
  readonly maxMisses: number;
}
