// What the face log keeps about each track while the video runs, since the frames are gone
// afterwards: a few face descriptors at different sizes (for stitching, which takes them when the
// track ends), gender votes, and the best face crop (for thumbnails), JPEG-compressed once the
// track has ended, into a file when the job gives a folder for them.
import fs from 'node:fs';
import cv from '../video/opencv.js';
import { expand, round } from './geometry.js';
import { faceQuality } from './face-quality.js';
import type { Box, FaceDetection } from './types.js';

/** Descriptors kept per track: a few views are enough to compare with another track. */
const MAX_DESCRIPTORS = 4;
/** Faces narrower than this are not described: upscaled to 150 px they describe blur. */
export const MIN_DESCRIBE_WIDTH = 36;
/** A new descriptor is taken when the face has grown by this factor since the last one... */
const DESCRIBE_GROWTH = 1.35;
/** ...or this many seconds have passed. */
const DESCRIBE_EVERY_SECONDS = 1.5;
/** Gender votes kept per track. */
const MAX_GENDER_VOTES = 6;
/** Faces narrower than this add no gender vote beyond a track's first (the classifier's input is 112 px). */
const MIN_GENDER_WIDTH = 40;
/** Least weight of a gender vote. */
const MIN_VOTE_WEIGHT = 0.01;
/** Thumbnail margin around the face box, as a share of its size on each side. */
export const THUMBNAIL_MARGIN = 0.4;

/** Where a face's thumbnail is cut: its box with THUMBNAIL_MARGIN, inside a width x height frame, whole pixels. */
export function thumbnailRect(box: Box, width: number, height: number): Box {
  return round(expand(box, THUMBNAIL_MARGIN, width, height));
}
/**
 * JPEG quality of an ended track's kept crop: the crop of a 155-172 px face (bench videos at 720p
 * and 1080p) is 330-385 KB raw, 23-29 KB as JPEG. A long video's thousands of tracks keep theirs
 * until the end of the job: in memory, 2 hours of the 1080p bench video would hold 57-72 MB of
 * them, so the face log writes them to files.
 */
const KEPT_CROP_QUALITY = 95;

export interface GenderVote {
  male: number;
  weight: number;
}

export interface FaceAnalysers {
  describe(frame: cv.Mat, face: FaceDetection): Float32Array;
  classifyGender?(frame: cv.Mat, face: FaceDetection): { male: number };
}

export class TrackEvidence {
  private described: Float32Array[] = [];
  readonly genderVotes: GenderVote[] = [];
  bestQuality = -1;
  private crop: cv.Mat | null = null;
  private cropJpeg: Buffer | null = null;
  private cropFile: string | null = null;
  /** The face's width and frame at the last sample point. */
  private describedWidth = 0;
  private describedFrame = -Infinity;

  /** The face descriptors taken so far. */
  get descriptors(): readonly Float32Array[] {
    return this.described;
  }

  /** Hands the descriptors over (to the stitcher, when the track ends) and keeps none. */
  takeDescriptors(): Float32Array[] {
    const taken = this.described;
    this.described = [];
    return taken;
  }

  get hasCrop(): boolean {
    return this.crop !== null || this.cropJpeg !== null || this.cropFile !== null;
  }

  /** The best face with its margin (a new Mat), or null when the track had no usable crop. */
  bestCrop(): cv.Mat | null {
    if (this.crop) return this.crop.copy();
    if (this.cropFile) return cv.imread(this.cropFile);
    return this.cropJpeg ? cv.imdecode(this.cropJpeg) : null;
  }

  /**
   * The track has ended: its crop is compressed, since no better face will come; into `file` if
   * given (the caller removes it), else in memory.
   */
  compact(file?: string): void {
    if (!this.crop) return;
    const jpeg = cv.imencode('.jpg', this.crop, [cv.IMWRITE_JPEG_QUALITY, KEPT_CROP_QUALITY]);
    // A file's write throws its errno (a full disk is ENOSPC), where OpenCV's imwrite only says no.
    if (file) fs.writeFileSync(file, jpeg);
    this.cropFile = file ?? null;
    this.cropJpeg = file ? null : jpeg;
    this.crop.release();
    this.crop = null;
  }

  /** Looks at a fresh detection of the track's face in `frame`. */
  observe(frame: cv.Mat, frameIndex: number, fps: number, face: FaceDetection, analysers: FaceAnalysers): void {
    const quality = faceQuality(face);
    if (quality > this.bestQuality) {
      const r = thumbnailRect(face.box, frame.cols, frame.rows);
      if (r.width >= 2 && r.height >= 2) {
        this.crop?.release();
        this.crop = frame.getRegion(new cv.Rect(r.x, r.y, r.width, r.height)).copy();
        this.cropJpeg = null;
        this.bestQuality = quality;
      }
    }
    const width = face.box.width;
    const due =
      width >= MIN_DESCRIBE_WIDTH &&
      (this.described.length === 0 ||
        width >= this.describedWidth * DESCRIBE_GROWTH ||
        frameIndex - this.describedFrame >= DESCRIBE_EVERY_SECONDS * fps);
    if (due) {
      // A sample point: the face has grown or time has passed since the last one. The first few
      // are described; all of them may vote on gender.
      if (this.described.length < MAX_DESCRIPTORS) this.described.push(analysers.describe(frame, face));
      this.describedWidth = width;
      this.describedFrame = frameIndex;
    }
    // Every track gets at least one gender vote, however small its face; better faces add more.
    if (analysers.classifyGender && (this.genderVotes.length === 0 || (due && width >= MIN_GENDER_WIDTH))) {
      if (this.genderVotes.length >= MAX_GENDER_VOTES) {
        // Keep the best votes: replace the weakest if this face is better.
        const weakest = this.genderVotes.reduce((a, b) => (a.weight <= b.weight ? a : b));
        if (weakest.weight >= quality) return;
        this.genderVotes.splice(this.genderVotes.indexOf(weakest), 1);
      }
      // A floor on the weight: a profile face (frontalness 0) still votes, just barely.
      this.genderVotes.push({ male: analysers.classifyGender(frame, face).male, weight: Math.max(MIN_VOTE_WEIGHT, quality) });
    }
  }
}
