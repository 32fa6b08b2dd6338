// The face log as a worker job: the accepted upload's facts in, the task's result fields out.
import type { AnalyticRunner } from '../jobs/runners.js';
import { runFaceLog, type FaceLogInput } from './run.js';

export const runFaceLogJob: AnalyticRunner = async (input, progress) => {
  const { decodeWarning, ...result } = await runFaceLog(input as unknown as FaceLogInput, progress);
  let message = `Found ${result.number_of_sightings} sightings, ${result.number_of_tracks} tracks, ${result.number_of_faces} faces`;
  if (decodeWarning && result.frames_processed < result.frames) {
    message += `; the video could be decoded only up to frame ${result.frames_processed} of ${result.frames} (${decodeWarning})`;
  }
  return { message, result: result as unknown as Record<string, unknown> };
};
