// Entry point of the tamper check inside a worker process: decode the uploads, check the limits
// of the contract, analyse, and refresh the camera's reference when asked and nothing is wrong.
import { AnalyticError } from '../errors.js';
import { analyseWorking, TamperCauses } from './analyse.js';
import { readWorkingClip } from './clip.js';
import { MAX_TAMPER_FRAMES } from './limits.js';
import { loadReference } from './reference.js';
import { quietestFrame, writeReference } from './refresh.js';

export interface KamcheckRun {
  videoPath: string;
  /** The reference picture; possibly a camera's stored reference shared by other jobs: only read. */
  imagePath: string;
  /** Where to write the clip's quietest frame (JPEG) when the probability is 0. */
  refreshPath?: string;
}

export async function runKamcheck(
  input: KamcheckRun,
  progress: (message: string) => void,
): Promise<{ probability: number; causes: TamperCauses; renewedReference: boolean }> {
  progress('Decoding');
  const reference = loadReference(input.imagePath);
  const clip = readWorkingClip(input.videoPath, {
    maxFrames: MAX_TAMPER_FRAMES,
    keepFull: input.refreshPath !== undefined,
    sizeFor: (width, height) => {
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
  progress(`Analysing ${clip.frameCount} frames`);
  const result = analyseWorking(reference.working, clip.working, reference.size);
  const renewedReference = input.refreshPath !== undefined && result.probability === 0;
  if (renewedReference) writeReference(input.refreshPath!, clip.full[quietestFrame(clip.working.map((w) => w.gray))]);
  for (const frame of clip.full) frame.release();
  progress(`Tampering probability ${result.probability}%`);
  return { ...result, renewedReference };
}
