// The face analytics as the job machinery sees them (lib/jobs/analytic.ts): the face log, and the
// original service's face log of an image and face detection of a video or an image, all run by
// the face log's pipeline. No OpenCV here; the worker's code is loaded only in worker processes.
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
   * Blur every face found in the overlay video, the results image and the track thumbnails
   * (sighting thumbnails keep the face: showing it is what they are for). Default false.
   */
  blur?: boolean;
  /** Also write the first drawn frame as a JPEG (`results_image`): the jobs of an image. Default false. */
  resultsImage?: boolean;
  /** Write the overlay video (`results_video`); a face detection of an image has none. Default true. */
  overlayVideo?: boolean;
}

/** A face log's time limit beyond its frames: model loading, sightings, thumbnails, the XML. */
const FIXED_TIME_MS = 60_000;

/**
 * The face analytics share one input and one runner; they differ in what the upload may be and
 * which outputs the job writes (their routes decide both, lib/facelog/routes.ts). Records stored
 * before `blur`, `resultsImage` and `overlayVideo` existed read back with their defaults.
 */
function faceAnalytic(name: string): Analytic<FaceLogInput> {
  return {
    name,
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
      ...readOptionalFields(raw, { callbackUrl: 'string', blur: 'boolean', resultsImage: 'boolean', overlayVideo: 'boolean' }),
    }),
    timeoutMs: (input, config) => FIXED_TIME_MS + framesToProcess(input) * config.faceLogMsPerFrame,
    writesResultFiles: true,
    loadRunner: async () => (await import('./job.js')).runFaceLogJob,
  };
}

/** The face log of the API contract: a video, or a still image as a one-frame video. */
export const faceLogAnalytic = faceAnalytic('face_log');
/** The original service's face log of one image: the face log's task plus `results_image`. */
export const faceLogImageAnalytic = faceAnalytic('face_log_image');
/** The original service's face detection of a video: the overlay video and the XML of every face. */
export const faceDetectAnalytic = faceAnalytic('face_detect');
/** Face detection of one image: `results_image` and the XML. */
export const faceDetectImageAnalytic = faceAnalytic('face_detect_image');
