// Reading the clip of a tamper check in the worker. Only the frames the analysis uses (spread()
// over the clip) are kept, each reduced to the working size as soon as it is decoded; every other
// full-size frame is released at once. A 720p clip's 25 BGR frames are 69 MB: holding them all
// made the allocator hand out fresh pages for every frame of every check, and those page faults
// cost more CPU than decoding the frames (400-700 ms against 120-170 ms per 720p clip on the
// appliance's VM, scripts/bench-fleet.ts). Freed right away, the next frame reuses the memory.
import cv from '../video/opencv.js';
import { DecodeError } from '../video/errors.js';
import { openVideo } from '../video/decode.js';
import { readsNoise, spread, toWorking, type WorkingPicture, type WorkingSize } from './cells.js';

export interface WorkingClip {
  /** Frames decoded (at most maxFrames + 1: one more tells that the clip is too long). */
  frameCount: number;
  width: number;
  height: number;
  /** The spread frames at the working size, in clip order. */
  working: WorkingPicture[];
  /** Each spread frame's number in the clip (from 0, in decoding order), as `working`. */
  frameNumbers: number[];
  /** The same frames at full size (BGR) when `keepFull` was asked; empty otherwise. */
  full: cv.Mat[];
}

export interface ClipReadOptions {
  /** Frames the contract allows; reading stops one frame after it. */
  maxFrames: number;
  /** The working size for the clip's frame size; throws to refuse that size (before any analysis). */
  sizeFor: (width: number, height: number) => WorkingSize;
  /** Also keep the spread frames at full size (for a reference refresh). */
  keepFull?: boolean;
}

/**
 * Decodes a clip, keeping the spread() frames at the working size. The frame count comes from the
 * container; when the decoded count differs (a container that does not say, or says wrong), the
 * clip is read again with the decoded count, so the frames kept are exactly spread() of the clip.
 * A clip over maxFrames comes back with frameCount maxFrames + 1 and no frames.
 */
export function readWorkingClip(path: string, options: ClipReadOptions): WorkingClip {
  // one capture for the count and the first reading: opening one costs 15-20 ms of CPU at 720p
  const cap = openVideo(path);
  const first = readPass(cap, options, containerFrameCount(cap, options.maxFrames));
  if (first.picked) return first.clip;
  release(first.clip);
  const second = readPass(openVideo(path), options, first.clip.frameCount);
  if (!second.picked) throw new DecodeError('the video decodes to a different number of frames on a second reading');
  return second.clip;
}

/** The container's frame count when it is plausible for a tamper clip; null when unknown. */
function containerFrameCount(cap: cv.VideoCapture, maxFrames: number): number | null {
  const n = Math.round(cap.get(cv.CAP_PROP_FRAME_COUNT));
  return Number.isFinite(n) && n >= 1 && n <= maxFrames ? n : null;
}

/**
 * One reading of the clip (then `cap` is released), keeping spread() of `assumedCount` frames
 * (none when null). `picked` is true when the clip had that many frames, or is too long (nothing
 * is analysed then).
 */
function readPass(cap: cv.VideoCapture, options: ClipReadOptions, assumedCount: number | null): { clip: WorkingClip; picked: boolean } {
  const picks = new Set(assumedCount === null ? [] : spread(Array.from({ length: assumedCount }, (_, i) => i)));
  const clip: WorkingClip = { frameCount: 0, width: 0, height: 0, working: [], frameNumbers: [], full: [] };
  let size: WorkingSize | null = null;
  try {
    for (;;) {
      if (clip.frameCount > options.maxFrames) break;
      const frame = cap.read();
      if (!frame || frame.empty) break;
      if (clip.frameCount === 0) {
        clip.width = frame.cols;
        clip.height = frame.rows;
        size = options.sizeFor(frame.cols, frame.rows);
      }
      let kept = false;
      if (picks.has(clip.frameCount)) {
        const working = toWorking(frame, size!, readsNoise(clip.working.length, picks.size));
        clip.working.push(working);
        clip.frameNumbers.push(clip.frameCount);
        // a frame already at the working size is its own working picture
        kept = options.keepFull === true || working.bgr === frame;
        if (options.keepFull) clip.full.push(frame);
      }
      if (!kept) frame.release();
      clip.frameCount++;
    }
  } finally {
    cap.release();
  }
  if (clip.frameCount === 0) throw new DecodeError('the video has no decodable frame (corrupt or unsupported file)');
  if (clip.frameCount > options.maxFrames) {
    release(clip);
    return { clip: { ...clip, working: [], frameNumbers: [], full: [] }, picked: true };
  }
  return { clip, picked: clip.frameCount === assumedCount && clip.working.length === picks.size };
}

function release(clip: WorkingClip): void {
  const mats = new Set([...clip.working.flatMap((w) => [w.bgr, w.gray]), ...clip.full]);
  for (const m of mats) m.release();
}
