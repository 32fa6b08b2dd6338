// The face log as the job machinery sees it (lib/jobs/analytic.ts): no OpenCV here; the worker's
// code is loaded only in worker processes.
import type { Analytic } from '../jobs/analytic.js';
import { readFields, readOptionalFields } from '../jobs/input-fields.js';
import { framesToProcess } from './frame-range.js';

export interface FaceLogInput {
  jobId: string;
  videoPath: string;
  videoName: string;
  resultsDir: string;
  width: number;
  height: number;
  fps: number;
  /** Frames in the input by its container (1 for an image). */
  frames: number;
  still: boolean;
  /** The first frame processed, in the input's numbering; every reported frame number is the input's. */
  startFrame: number;
  maxFrames: number;
  minSize: number;
  gender: boolean;
  trackThumbnails: boolean;
  /** The upload's `callback_url`: where this job's events go too (lib/webhooks/). */
  callbackUrl?: string;
  /**
   * Blur every face found in the overlay video and the track thumbnails (sighting thumbnails keep
   * the face: showing it is what they are for). Absent in records stored before it existed: false.
   */
  blur?: boolean;
}

/** A face log's time limit beyond its frames: model loading, sightings, thumbnails, the XML. */
const FIXED_TIME_MS = 60_000;

export const faceLogAnalytic: Analytic<FaceLogInput> = {
  name: 'face_log',
  parseInput: (raw) => ({
    ...readFields(raw, {
      jobId: 'string',
      videoPath: 'string',
      videoName: 'string',
      resultsDir: 'string',
      width: 'number',
      height: 'number',
      fps: 'number',
      frames: 'number',
      still: 'boolean',
      startFrame: 'number',
      maxFrames: 'number',
      minSize: 'number',
      gender: 'boolean',
      trackThumbnails: 'boolean',
    }),
    ...readOptionalFields(raw, { callbackUrl: 'string', blur: 'boolean' }),
  }),
  timeoutMs: (input, config) => FIXED_TIME_MS + framesToProcess(input) * config.faceLogMsPerFrame,
  writesResultFiles: true,
  loadRunner: async () => (await import('./job.js')).runFaceLogJob,
};
