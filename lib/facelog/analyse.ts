// The face log's frame loop: decode -> (every few frames) detect where there was motion ->
// track -> keep evidence per track -> draw the overlay; each confirmed track goes to the stitcher
// as it ends. The sightings' gender and the result files come after the last frame (see run.ts).
// The stages come built (run.ts builds the real ones), so a test can plug a fake into any of them.
import path from 'node:path';
import type { ProgressReporter } from '../jobs/analytic.js';
import type { FrameSource } from '../video/frame-reader.js';
import { fpsOrDefault } from '../video/fps.js';
import type { VideoEncoder } from '../video/video-encoder.js';
import type { YuvFrame } from '../video/yuv-frame.js';
import type { FaceDetector } from './detect/detector.js';
import type { MotionSource } from './motion/motion-source.js';
import type { ScanSchedule } from './detect/scan-schedule.js';
import { drawTracks } from './output/overlay.js';
import { blurFaces } from './output/blur.js';
import { FramePyramid } from './track/kcf.js';
import type { FaceTracker } from './track/face-tracker.js';
import { followBackwards } from './track/backfill.js';
import { MIN_SIZE_SLACK } from './detect/detector.js';
import { seeAgain } from './detect/still-evidence.js';
import type { Track } from './track/track.js';
import type { TrackStitcher } from './sightings/stitch.js';
import { TrackEvidence, type FaceAnalysers } from './track-evidence.js';

/**
 * Detector runs per second of video; KCF follows the faces in between. A walking face moves about
 * its own width in 0.2 s at the sizes that matter, which KCF's search window still spans.
 */
const DETECTIONS_PER_SECOND = 5;

/** The frame loop's stages, built for one video of the options' size. */
export interface Stages {
  detector: FaceDetector;
  tracker: FaceTracker;
  motion: MotionSource;
  /** Where each detector run after the first looks (the first searches the whole frame). */
  scan: Pick<ScanSchedule, 'next'>;
  /** The sighting generator, fed each confirmed track as it ends. */
  stitcher: Pick<TrackStitcher, 'add' | 'settle' | 'groups'>;
}

export interface AnalyseOptions {
  width: number;
  height: number;
  fps: number;
  minSize: number;
  /** Frames in the input, for progress messages (0 when unknown). */
  totalFrames: number;
  /** A still image: one frame, every detection is a track. */
  still: boolean;
  /** Blur the tracked faces in the overlay before their boxes are drawn (output/blur.ts). */
  blurFaces?: boolean;
  /** Where ended tracks' best crops go as JPEG files, instead of staying in memory (track-evidence.ts). */
  cropsDir?: string;
}

export interface FrameLoopResult {
  framesProcessed: number;
  tracks: Track[];
  evidence: Map<Track, TrackEvidence>;
  /** The tracks' numbers stitched into groups, one per possible sighting (sightings/stitch.ts). */
  groups: number[][];
  /** Detector model runs over the whole video (the dominant cost), 0 when the detector does not say. */
  detectorTiles: number;
  /** Their cost in runs of a 256 tile (a 128 tile is a quarter of one). */
  detectorCost: number;
}

export async function analyseFrames(
  source: FrameSource,
  encoder: Pick<VideoEncoder, 'write'>,
  stages: Stages,
  analysers: FaceAnalysers,
  options: AnalyseOptions,
  progress: ProgressReporter,
): Promise<FrameLoopResult> {
  const fps = fpsOrDefault(options.fps);
  const detectEvery = options.still ? 1 : Math.max(1, Math.round(fps / DETECTIONS_PER_SECOND));
  const { detector, tracker, motion, scan, stitcher } = stages;
  const evidence = new Map<Track, TrackEvidence>();
  /** Evidence of the tracks that had not ended at the last detector run. */
  const open = new Map<Track, TrackEvidence>();
  const evidenceOf = (t: Track) => {
    let e = evidence.get(t);
    if (!e) {
      evidence.set(t, (e = new TrackEvidence()));
      open.set(t, e);
    }
    return e;
  };
  // An ended track's boxes are final: the stitcher judges it against the tracks that ended near
  // it, and keeps its descriptors only while a track to come may still start near it.
  const stitch = (track: Track, e: TrackEvidence) =>
    stitcher.add({
      number: track.number,
      startFrame: track.startFrame,
      detectedFrom: track.firstDetectedFrame,
      endFrame: track.endFrame,
      lastBox: track.lastBox,
      boxAt: (f: number) => track.boxAt(f)?.box,
      descriptors: e.takeDescriptors(),
    });

  // Frames wait here before they are drawn and encoded, until every track visible in them has
  // been confirmed or dropped and its tail cut: a tentative track is decided within 2 detector
  // runs, a lost one ends after the tracker's maxMisses.
  const delay = (tracker.maxMisses + 2) * detectEvery + 1;
  const waiting: { index: number; frame: YuvFrame }[] = [];
  const emit = async (index: number, frame: YuvFrame) => {
    const faces = [];
    for (const track of tracker.tracks) {
      // A live track was detected after `index` (it would have ended otherwise): no undecided tail here.
      if (!track.confirmed) continue;
      const face = track.boxAt(index);
      if (face) faces.push({ track: track.number, box: face.box });
    }
    if (options.blurFaces) blurFaces(frame, faces.map((f) => f.box));
    drawTracks(frame, faces);
    await encoder.write(frame);
  };

  let index = 0;
  let lastProgress = 0;
  let detectorTiles = 0;
  let detectorCost = 0;
  for await (const frame of source.frames()) {
    const pyramid = new FramePyramid(frame);
    let detections = null;
    if (index % detectEvery === 0) {
      const moved = motion.update(frame.luma());
      const tracked = tracker.liveTracks.map((t) => ({ ...t.lastBox, lost: t.misses > 0, moving: t.extrapolate(index) }));
      const opts = index === 0 ? { minSize: options.minSize } : scan.next(tracked, moved);
      detections = detector.detect(frame.bgr(), opts);
      // A still has no later frame to confirm a face in: the detector looks again at other views.
      if (options.still) detections = seeAgain(detector, frame.bgr(), detections);
      detectorTiles += detector.lastTileCount ?? 0;
      detectorCost += detector.lastTileCost ?? 0;
    }
    const confirmed = tracker.step(index, pyramid, detections);
    // A face is found late (see track/backfill.ts): follow it back through the waiting frames.
    for (const track of confirmed) {
      const earlier = followBackwards(track, waiting.map((w) => ({ index: w.index, pyramid: () => new FramePyramid(w.frame) })), {
        width: options.width,
        height: options.height,
        minWidth: options.minSize * (1 - MIN_SIZE_SLACK),
        othersAt: (f) => tracker.tracks.filter((t) => t !== track && t.confirmed).flatMap((t) => t.boxAt(f)?.box ?? []),
      });
      track.prependTracked(earlier);
    }
    if (confirmed.length) for (const w of waiting) w.frame.release();
    if (detections) {
      // Ended tracks: a dropped tentative one's evidence goes, a confirmed one's crop is compressed.
      for (const [track, e] of open) {
        if (!track.ended) continue;
        open.delete(track);
        if (!track.confirmed) {
          evidence.delete(track);
          continue;
        }
        e.compact(options.cropsDir && path.join(options.cropsDir, `${track.key}.jpg`));
        stitch(track, e);
      }
      for (const track of tracker.liveTracks) {
        const last = track.detections[track.detections.length - 1];
        if (last.frame === index) evidenceOf(track).observe(frame.bgr(), index, fps, last, analysers);
      }
      // A track to come starts no earlier than the earliest live one, or than the waiting frames
      // a late confirmation follows it back through.
      stitcher.settle(Math.min(index - delay - 1, ...tracker.liveTracks.map((t) => t.startFrame)));
    }
    // The Mats made for the analysis go now; the frame's own bytes wait for the overlay.
    frame.release();
    waiting.push({ index, frame });
    if (waiting.length > delay) {
      const oldest = waiting.shift()!;
      await emit(oldest.index, oldest.frame);
    }
    index++;
    const now = Date.now();
    if (now - lastProgress >= 1000) {
      lastProgress = now;
      progress(options.totalFrames ? `Processing frame ${index} of ${options.totalFrames}` : `Processing frame ${index}`, { done: index, total: options.totalFrames || null });
    }
  }
  tracker.finish();
  for (const { index: i, frame } of waiting) await emit(i, frame);

  const tracks = tracker.confirmedTracks();
  for (const t of tracks) evidenceOf(t);
  for (const [track, e] of open) if (track.confirmed) stitch(track, e);
  return { framesProcessed: index, tracks, evidence, groups: stitcher.groups(), detectorTiles, detectorCost };
}
