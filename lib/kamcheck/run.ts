// Entry point of the tamper check inside a worker process: decode the uploads, check the limits
// of the contract, analyse, and refresh the camera's reference when asked and nothing is wrong;
// an alarm against a reference the appliance made is checked again against the one before it.
import { AnalyticError } from '../errors.js';
import { DecodeError } from '../video/errors.js';
import { analyseWorking, type CheckSettings, type TamperResult } from './analyse.js';
import { readWorkingClip } from './clip.js';
import { workingSize, type WorkingPicture } from './cells.js';
import { MAX_TAMPER_FRAMES } from './limits.js';
import { loadReference, type ReferencePicture } from './reference.js';
import { renewalPicture, writeCameraPicture } from './refresh.js';
import { ignoredAt, type IgnoreArea } from './ignored.js';
import type { SecondOpinionInput } from './analytic.js';

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
  /** A reference the appliance made (`imagePath`): the slot's older one, and the probability from which it is asked. */
  secondOpinion?: Pick<SecondOpinionInput, 'imagePath' | 'from'>;
}

/** The same clip against the older reference (KamcheckRun.secondOpinion): its answer, and the first one's probability. */
export interface SecondOpinionResult {
  /** Quiet against the older reference (setsAside): the check's answer is its, and the first reference leaves its slot. */
  setAside: boolean;
  probability: number;
  firstProbability: number;
}

/** JPEG quality of a camera's latest picture: for the eye, not for measurement. */
const PICTURE_JPEG_QUALITY = 90;

export async function runKamcheck(
  input: KamcheckRun,
  progress: (message: string) => void,
): Promise<TamperResult & { renewedReference: boolean; learnedReference: boolean; secondOpinion?: SecondOpinionResult }> {
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
  const second = secondOpinion(input, result, clip.working, reference, settings);
  const renewedReference = !learnedReference && input.refreshPath !== undefined && result.probability < (input.refreshBelow ?? 1);
  if (renewedReference) writeRenewal(input.refreshPath!);
  if (input.picturePath !== undefined) writeCameraPicture(input.picturePath, clip.full[clip.full.length - 1], PICTURE_JPEG_QUALITY);
  // (the working frames may be the full ones: the second opinion reads them first)
  for (const frame of clip.full) frame.release();
  const answer = second?.setAside ? second.answer : result;
  progress(`Tampering probability ${answer.probability}%`);
  const report = second ? { secondOpinion: { setAside: second.setAside, probability: second.answer.probability, firstProbability: result.probability } } : {};
  return { ...answer, renewedReference, learnedReference, ...report };
}

/**
 * The clip against the slot's older reference, when it alarmed against one the appliance made
 * (KamcheckRun.secondOpinion); null when not asked, or when the sweep of unlisted reference files
 * took the older one meanwhile (the first answer stands). The older reference is of the slot and
 * the clip's size (lib/cameras/check-setup.ts); a file of another size gives no opinion either.
 */
function secondOpinion(
  input: KamcheckRun,
  first: TamperResult,
  working: WorkingPicture[],
  reference: ReferencePicture,
  settings: CheckSettings,
): { answer: TamperResult; setAside: boolean } | null {
  const asked = input.secondOpinion;
  if (!asked || first.probability < asked.from) return null;
  const older = readableReference(asked.imagePath);
  if (!older || older.width !== reference.width || older.height !== reference.height) return null;
  const answer = analyseWorking(older.working, working, older.size, settings);
  return { answer, setAside: setsAside(answer.probability, asked.from) };
}

/**
 * Whether the older reference's answer (`again`) takes the first one's place: when it is quiet,
 * under half the camera's alarm line, not merely under the line. A light the renewal kept is
 * absent from the older reference (headlights clips: 1-2 against their own reference); a defocus
 * near the line scores near it against both, and its alarm stands (benchmarks.md, renewed
 * references: 2 of 220 day defocus clips at 50 against the median scored 48-49 against their own).
 */
export function setsAside(again: number, from: number): boolean {
  return again < from / 2;
}

function readableReference(path: string): ReferencePicture | null {
  try {
    return loadReference(path);
  } catch (err) {
    if (err instanceof DecodeError) return null;
    throw err;
  }
}
