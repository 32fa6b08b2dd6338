// Entry point of the tamper check inside a worker process: decode the uploads, check the limits
// of the contract, analyse.
import { AnalyticError } from '../errors.js';
import { readImage, readVideoFrames } from '../video/decode.js';
import { analyseTamper, TamperCauses } from './analyse.js';
import { MAX_TAMPER_FRAMES } from './limits.js';


export async function runKamcheck(
  input: { videoPath: string; imagePath: string },
  progress: (message: string) => void,
): Promise<{ probability: number; causes: TamperCauses }> {
  progress('Decoding');
  // one frame more than allowed: enough to tell that the clip is too long without decoding it all
  const clip = readVideoFrames(input.videoPath, MAX_TAMPER_FRAMES + 1);
  if (clip.frames.length > MAX_TAMPER_FRAMES) {
    throw new AnalyticError('too_many_frames', `the clip has more than ${MAX_TAMPER_FRAMES} frames`);
  }
  const reference = readImage(input.imagePath);
  if (reference.cols !== clip.width || reference.rows !== clip.height) {
    throw new AnalyticError(
      'resolution_mismatch',
      `the reference image is ${reference.cols}x${reference.rows} but the video is ${clip.width}x${clip.height}`,
    );
  }
  progress(`Analysing ${clip.frames.length} frames`);
  const result = analyseTamper(clip.frames, reference);
  progress(`Tampering probability ${result.probability}%`);
  return result;
}
