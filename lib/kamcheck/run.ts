// Entry point of the tamper check inside a worker process: decode the uploads, check the limits
// of the contract, analyse, and refresh the camera's reference when asked and nothing is wrong.
import { AnalyticError } from '../errors.js';
import { analyseWorking, type TamperResult } from './analyse.js';
import { readWorkingClip } from './clip.js';
import { workingSize } from './cells.js';
import { MAX_TAMPER_FRAMES } from './limits.js';
import { loadReference } from './reference.js';
import { renewalPicture, writeCameraPicture } from './refresh.js';
import { ignoredAt, type IgnoreArea } from './ignored.js';

export interface KamcheckRun {
  videoPath: string;
  /** The reference picture; possibly a camera's stored reference shared by other jobs: only read. Absent when learned (`learnPath`). */
  imagePath?: string;
  /** Where to write the clip's renewal picture (JPEG) when the probability is under `refreshBelow`. */
  refreshPath?: string;
  /** 1 when absent: only a check of 0 renews. */
  refreshBelow?: number;
  /** Without a reference: where to write the clip's renewal picture, which then is the reference. */
  learnPath?: string;
  /** Where to write the clip's last frame (JPEG): a camera's latest picture. */
  picturePath?: string;
  /** The camera's areas to ignore. */
  ignoreAreas?: IgnoreArea[];
  /** False: a picture too dark to judge is no tampering (the camera's dark_is_tamper). */
  darkIsTamper?: boolean;
}

/** JPEG quality of a camera's latest picture: for the eye, not for measurement. */
const PICTURE_JPEG_QUALITY = 90;

export async function runKamcheck(
  input: KamcheckRun,
  progress: (message: string) => void,
): Promise<TamperResult & { renewedReference: boolean; learnedReference: boolean }> {
  progress('Decoding');
  let reference = input.imagePath !== undefined ? loadReference(input.imagePath) : null;
  if (!reference && input.learnPath === undefined) throw new Error('a tamper check needs a reference or a place to learn one');
  const clip = readWorkingClip(input.videoPath, {
    maxFrames: MAX_TAMPER_FRAMES,
    keepFull: input.refreshPath !== undefined || input.learnPath !== undefined || input.picturePath !== undefined,
    sizeFor: (width, height) => {
      if (!reference) return workingSize(width, height);
      if (width !== reference.width || height !== reference.height) {
        throw new AnalyticError(
          'resolution_mismatch',
          `the reference image is ${reference.width}x${reference.height} but the video is ${width}x${height}`,
        );
      }
      return reference.size;
    },
  });
  if (clip.frameCount > MAX_TAMPER_FRAMES) {
    throw new AnalyticError('too_many_frames', `the clip has more than ${MAX_TAMPER_FRAMES} frames`);
  }
  // the scene without its passers-by, from the spread frames kept at full size (refresh.ts)
  const writeRenewal = (file: string) => {
    const picture = renewalPicture(clip.full);
    try {
      writeCameraPicture(file, picture);
    } finally {
      if (!clip.full.includes(picture)) picture.release();
    }
  };
  const learnedReference = reference === null;
  if (!reference) {
    writeRenewal(input.learnPath!);
    reference = loadReference(input.learnPath!);
  }
  progress(`Analysing ${clip.frameCount} frames`);
  const settings = { ignored: ignoredAt(input.ignoreAreas, reference.size), darkIsTamper: input.darkIsTamper ?? true };
  const result = analyseWorking(reference.working, clip.working, reference.size, settings);
  const renewedReference = !learnedReference && input.refreshPath !== undefined && result.probability < (input.refreshBelow ?? 1);
  if (renewedReference) writeRenewal(input.refreshPath!);
  if (input.picturePath !== undefined) writeCameraPicture(input.picturePath, clip.full[clip.full.length - 1], PICTURE_JPEG_QUALITY);
  for (const frame of clip.full) frame.release();
  progress(`Tampering probability ${result.probability}%`);
  return { ...result, renewedReference, learnedReference };
}
