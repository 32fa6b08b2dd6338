// One face-log job from start to finish: the frame loop, then sightings, gender, thumbnails, XML
// and the overlay video, written into a folder of this run's own under the job's `.partial`
// folder, which becomes the results folder only when everything is complete (a crash or retry
// never leaves half a result behind). Two runs of one job may overlap: a node that lost the job's
// lease (paused, cut off from the database) runs on until it learns so, and its clean-up must not
// touch the files of the run that took the job over.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { evenSize, readFrames } from '../video/frame-reader.js';
import { VideoEncoder } from '../video/video-encoder.js';
import { fpsOrDefault } from '../video/fps.js';
import { DecodeError } from '../video/errors.js';
import { diskFullError } from '../disk-space.js';
import { partialResultsDir } from '../jobs/published-results.js';
import type { ProgressReporter, StagedResults } from '../jobs/analytic.js';
import { analyseFrames, type Stages } from './analyse.js';
import type { FaceDetector } from './detect/detector.js';
import { ScanSchedule } from './detect/scan-schedule.js';
import { MotionRegions } from './motion/motion-regions.js';
import { KcfTracker } from './track/tracker.js';
import { FaceSpill } from './track/face-spill.js';
import { faceModels } from './models.js';
import { TrackStitcher } from './sightings/stitch.js';
import { descriptorDistance } from './appearance/descriptor.js';
import { bestScores, buildSighting, stillConfidence, type Sighting } from './sightings/sighting.js';
import { MIN_STILL_EVIDENCE } from './detect/still-evidence.js';
import { writeThumbnail } from './output/thumbnails.js';
import { writeFaceXml } from './output/xml.js';
import type { Track } from './track/track.js';
import { framesToProcess } from './frame-range.js';
import type { FaceLogInput } from './analytic.js';
import { overlayFile, resultsImageFile, sightingThumbnailFile, trackThumbnailFile, xmlFile } from './output/result-files.js';
import { OverlayOutputs } from './output/overlay-outputs.js';
import { blurPicture } from './output/blur.js';
import { THUMBNAIL_MARGIN, type TrackEvidence } from './track-evidence.js';
import { isDarkFace } from './low-light.js';

/**
 * A sighting is reported only when it has this confidence (length-discounted, see sighting.ts)...
 * On the bench set, false tracks seen in 2-4 detector runs score 0.20-0.38.
 */
export const MIN_SIGHTING_CONFIDENCE = 0.4;
/**
 * ...and its best detections are this convincing (mean of its 5 best scores). False tracks (backs
 * and blurred faces of vtest.avi's distant pedestrians, a face-like pattern) can be followed long
 * enough to pass the confidence alone, but the detector never scores them high: on the bench set
 * (two runs of 51 videos, 480p to 1080p) the 51 false sightings had a best-5 mean of 0.52-0.69,
 * the 184 true ones 0.83-0.95.
 */
export const MIN_BEST_SCORES = 0.76;
/**
 * ...or, when its best face is dark (the mean grey of that face with its thumbnail margin below
 * DARK_FACE_GREY), this convincing: at a third of the day's light, with the noise of the camera's
 * gain, the detector scores real faces lower, and false ones too. Measured, best-5 means:
 * - the face-log night set (seed 3, 34 videos): the 7 real groups of tracks below 0.8 whose face
 *   is dark (grey 26-57) at 0.653-0.772; the 8 false ones, dark or not, 0.54-0.62;
 * - the bench set by day (51 videos): the 22 false groups 0.54-0.63, none darker than grey 75.
 * The margin on the real side is thin (0.013): a darker or noisier night loses sightings first.
 */
export const MIN_BEST_SCORES_DARK = 0.64;
/** Detector runs without its face after which a confirmed track ends (about 0.7 s at 5 runs a second). */
const MAX_MISSES = 4;
// A still's sighting has one detection: its evidence is the detector's look at other views of the
// image instead (detect/still-evidence.ts, MIN_STILL_EVIDENCE), and its confidence that evidence.

/** The evidence of a group of tracks' best face: its thumbnail, and how dark the sighting is. */
function bestEvidence(group: Track[], evidenceOf: (t: Track) => TrackEvidence): TrackEvidence {
  return group.map(evidenceOf).reduce((a, b) => (b.bestQuality > a.bestQuality ? b : a));
}

/** What a group of tracks' best detector scores must reach: less when its best face is dark. */
function minBestScores(group: Track[], evidenceOf: (t: Track) => TrackEvidence): number {
  const crop = bestEvidence(group, evidenceOf).bestCrop();
  if (!crop) return MIN_BEST_SCORES;
  const dark = isDarkFace(crop);
  crop.release();
  return dark ? MIN_BEST_SCORES_DARK : MIN_BEST_SCORES;
}

export interface FaceLogResult {
  frames: number;
  frames_processed: number;
  input_video: string;
  resolution: string;
  number_of_sightings: number;
  /** Absent when the job writes no overlay video (a face detection of an image). */
  results_video?: string;
  results_xml: string;
  /** The jobs of an image: the drawn frame. */
  results_image?: string;
  sightings: Omit<Sighting, 'tracks'>[];
  start_frame: number;
  /** Beyond the seed, for the completion message and the XML. */
  number_of_tracks: number;
  number_of_faces: number;
}

/** What a run answers: the result, and what the queue and the job's message need besides. */
type FaceLogRun = FaceLogResult & { decodeWarning: string | null; detectorTiles: number; detectorCost: number; stagedResults: StagedResults };

export async function runFaceLog(
  input: FaceLogInput,
  progress: ProgressReporter,
): Promise<FaceLogRun> {
  // Earlier runs' leftovers go with the whole `.partial` folder once the job is final (service.ts).
  const partial = path.join(partialResultsDir(input.resultsDir), randomUUID());
  // Ended tracks' best crops wait here for the thumbnails, and their face records in the spill for
  // the XML; both gone before the results are staged.
  const crops = path.join(partial, 'crops');
  await fs.mkdir(crops, { recursive: true });
  const spill = new FaceSpill(path.join(partial, 'faces.spill'));
  try {
    return await runFaceLogIn(partial, crops, spill, input, progress);
  } finally {
    spill.close();
  }
}

async function runFaceLogIn(
  partial: string,
  crops: string,
  spill: FaceSpill,
  input: FaceLogInput,
  progress: ProgressReporter,
): Promise<FaceLogRun> {
  const models = faceModels();
  const fps = input.still ? 0 : input.fps;
  const source = readFrames(input.videoPath, {
    width: input.width,
    height: input.height,
    startFrame: input.startFrame,
    maxFrames: input.maxFrames,
  });
  // Decoded frames come at even sizes (4:2:0), and the overlay keeps them.
  const overlayVideo = input.overlayVideo !== false;
  const encoder = new OverlayOutputs(
    overlayVideo ? new VideoEncoder(path.join(partial, overlayFile(input.jobId)), { ...evenSize(input.width, input.height), fps: fps || 1 }) : null,
    input.resultsImage ? { file: path.join(partial, resultsImageFile(input.jobId)), width: input.width, height: input.height } : null,
  );
  let loop;
  try {
    loop = await analyseFrames(
      source,
      encoder,
      faceLogStages(models.detector, input, spill),
      {
        describe: (frame, face) => models.describer.describe(frame, face),
        classifyGender: input.gender ? (frame, face) => models.gender.classify(frame, face) : undefined,
      },
      {
        width: input.width,
        height: input.height,
        fps: input.fps,
        minSize: input.minSize,
        totalFrames: framesToProcess(input),
        still: input.still,
        blurFaces: input.blur === true,
        cropsDir: crops,
      },
      progress,
    );
    if (loop.framesProcessed === 0) {
      throw new DecodeError(`the video has no decodable frame${source.decodeError ? `: ${source.decodeError}` : ''}`);
    }
    if (overlayVideo) progress(`Encoding the overlay video (${loop.framesProcessed} frames)`);
    await encoder.finish();
  } catch (err) {
    encoder.abort();
    source.close();
    const full = diskFullError(err);
    await fs.rm(partial, { recursive: true, force: true });
    throw full ?? err;
  }

  progress('Generating sightings');
  const { tracks, evidence, groups } = loop;
  // The analysis counts from the first frame it was given; results speak the input's numbering.
  if (input.startFrame > 0) for (const t of tracks) t.shiftFrames(input.startFrame);
  const byNumber = new Map(tracks.map((t) => [t.number, t]));
  const evidenceOf = (t: Track) => evidence.get(t)!;
  // A weak sighting (a few low-score detections: a back of a head, a face-like pattern) is not
  // reported; its tracks stay in the XML, with no sighting.
  const sightings = groups
    .map((g) => g.map((n) => byNumber.get(n)!))
    .filter((g) => (input.still ? (stillConfidence(g) ?? 0) >= MIN_STILL_EVIDENCE : bestScores(g) >= minBestScores(g, evidenceOf)))
    .map((g) => buildSighting(g, evidenceOf, input.gender))
    .filter((s) => s.confidence >= MIN_SIGHTING_CONFIDENCE)
    // Named once the reported sightings are known: n counts them from 1.
    .map((s, i): Sighting => ({ ...s, thumbnail: sightingThumbnailFile(input.jobId, i + 1) }));

  for (const s of sightings) {
    const crop = bestEvidence(s.tracks.map((n) => byNumber.get(n)!), evidenceOf).bestCrop();
    if (crop) await writeThumbnail(partial, s.thumbnail, crop);
  }
  const trackThumbnail = (t: Track) => (input.trackThumbnails && evidenceOf(t).hasCrop ? trackThumbnailFile(input.jobId, t.number) : null);
  if (input.trackThumbnails) {
    for (const t of tracks) {
      const crop = evidenceOf(t).bestCrop();
      // Sighting thumbnails keep the face (they exist to show it); a track's is blurred with the overlay.
      if (!crop) continue;
      const picture = input.blur ? blurPicture(crop, THUMBNAIL_MARGIN) : crop;
      if (picture !== crop) crop.release();
      await writeThumbnail(partial, trackThumbnail(t)!, picture);
    }
  }

  await fs.rm(crops, { recursive: true, force: true });

  const frames = Math.max(input.frames, loop.framesProcessed);
  const resolution = `${input.width}x${input.height}@${formatFps(fps)}fps`;
  await writeFaceXml(
    path.join(partial, xmlFile(input.jobId)),
    {
      jobId: input.jobId,
      inputVideo: input.videoName,
      resolution,
      width: input.width,
      height: input.height,
      fps,
      frames,
      framesProcessed: loop.framesProcessed,
      startFrame: input.startFrame,
    },
    sightings,
    tracks,
    trackThumbnail,
  );
  await fs.rm(spill.file);

  // The queue moves `partial` to input.resultsDir once the database accepts this run's outcome.
  return {
    stagedResults: { from: partial, to: input.resultsDir },
    frames,
    frames_processed: loop.framesProcessed,
    input_video: input.videoName,
    resolution,
    number_of_sightings: sightings.length,
    ...(overlayVideo ? { results_video: overlayFile(input.jobId) } : {}),
    results_xml: xmlFile(input.jobId),
    ...(input.resultsImage ? { results_image: resultsImageFile(input.jobId) } : {}),
    sightings: sightings.map(({ tracks: _tracks, ...s }) => s),
    start_frame: input.startFrame,
    number_of_tracks: tracks.length,
    number_of_faces: tracks.reduce((n, t) => n + t.faceCount, 0),
    decodeWarning: source.decodeError,
    detectorTiles: loop.detectorTiles,
    detectorCost: loop.detectorCost,
  };
}

/**
 * The real stages for one video: `detector` (BlazeFace), KCF tracking (a still image's every
 * detection is a track; ended tracks' face records go to `spill`), frame differencing, a scan
 * schedule that plans for `detector`, and the stitcher of tracks by their face descriptors.
 */
export function faceLogStages(detector: FaceDetector, input: Pick<FaceLogInput, 'width' | 'height' | 'fps' | 'minSize' | 'still'>, spill?: FaceSpill): Stages {
  const { width, height, minSize, still } = input;
  return {
    detector,
    tracker: new KcfTracker({ width, height, minDetections: still ? 1 : 2, maxMisses: MAX_MISSES, spill }),
    motion: new MotionRegions(width, height),
    scan: new ScanSchedule(detector, width, height, minSize),
    stitcher: new TrackStitcher({ fps: fpsOrDefault(input.fps), distance: descriptorDistance }),
  };
}

/** `25.0`, `29.97`: a decimal number, as the SPEC's `1280x720@25.0fps`. */
export function formatFps(fps: number): string {
  const rounded = Math.round(fps * 100) / 100;
  return Number.isInteger(rounded) ? rounded.toFixed(1) : String(rounded);
}
