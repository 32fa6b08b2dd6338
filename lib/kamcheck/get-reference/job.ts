// Picking a reference from a clip, in a worker process: the clip's spread frames at the working
// size, the quietest of them (refresh.ts, as a camera's reference is renewed), written at full size
// as the job's result file. `frame_number` is that frame's number in the clip, from 0.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AnalyticRunner } from '../../jobs/analytic.js';
import { partialResultsDir } from '../../jobs/published-results.js';
import { AnalyticError } from '../../errors.js';
import { diskFullError } from '../../disk-space.js';
import { readWorkingClip } from '../clip.js';
import { workingSize } from '../cells.js';
import { MAX_REFERENCE_CLIP_FRAMES } from '../limits.js';
import { quietestFrame, writeReference } from '../refresh.js';
import type { ReferencePickInput } from './analytic.js';
import { referenceImageFile } from './result-files.js';

export const runReferencePickJob: AnalyticRunner<ReferencePickInput> = async (input, progress) => {
  progress('Decoding');
  const clip = readWorkingClip(input.videoPath, {
    maxFrames: MAX_REFERENCE_CLIP_FRAMES,
    keepFull: true,
    sizeFor: (width, height) => workingSize(width, height),
  });
  // Earlier runs' leftovers go with the whole `.partial` folder once the job is final (service.ts).
  const partial = path.join(partialResultsDir(input.resultsDir), randomUUID());
  try {
    if (clip.frameCount > MAX_REFERENCE_CLIP_FRAMES) {
      throw new AnalyticError('too_many_frames', `the clip has more than ${MAX_REFERENCE_CLIP_FRAMES} frames`);
    }
    progress(`Comparing ${clip.working.length} of ${clip.frameCount} frames`);
    const pick = quietestFrame(clip.working.map((w) => w.gray));
    const frameNumber = clip.frameNumbers[pick];
    const file = referenceImageFile(input.jobId);
    await fs.mkdir(partial, { recursive: true });
    writeReference(path.join(partial, file), clip.full[pick]);
    return {
      message: `Frame ${frameNumber} of ${clip.frameCount} is the quietest`,
      result: { frame_number: frameNumber, reference_image: file },
      // The queue moves `partial` to input.resultsDir once the database accepts this run's outcome.
      stagedResults: { from: partial, to: input.resultsDir },
    };
  } catch (err) {
    await fs.rm(partial, { recursive: true, force: true });
    throw diskFullError(err) ?? err;
  } finally {
    for (const m of new Set([...clip.working.flatMap((w) => [w.bgr, w.gray]), ...clip.full])) m.release();
  }
};
