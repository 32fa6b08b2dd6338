// The face log as a worker job: the accepted upload's facts in, the task's result fields out.
import type { AnalyticRunner } from '../jobs/analytic.js';
import type { FaceLogInput } from './analytic.js';
import { runFaceLog } from './run.js';
import { framesToProcess } from './frame-range.js';

export const runFaceLogJob: AnalyticRunner<FaceLogInput> = async (input, progress) => {
  const { decodeWarning, detectorTiles: _tiles, detectorCost: _cost, stagedResults, ...result } = await runFaceLog(input, progress);
  let message = `Found ${result.number_of_sightings} sightings, ${result.number_of_tracks} tracks, ${result.number_of_faces} faces`;
  const expected = framesToProcess(input);
  if (result.frames_processed < expected) {
    // The container promised more frames than could be decoded: a truncated or corrupt file.
    const end = input.startFrame + expected;
    message += `; the video could be decoded only up to frame ${input.startFrame + result.frames_processed} of ${end}`;
    message += decodeWarning ? ` (${decodeWarning})` : ' (truncated or corrupt)';
  }
  return { message, result: result as unknown as Record<string, unknown>, stagedResults };
};
