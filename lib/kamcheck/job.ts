// The tamper check as a worker job: paths in, probability and causes out.
import type { AnalyticRunner } from '../jobs/runners.js';
import { runKamcheck } from './run.js';

export const runKamcheckJob: AnalyticRunner = async (input, progress) => {
  const { probability, causes } = await runKamcheck(
    { videoPath: String(input.videoPath), imagePath: String(input.imagePath) },
    progress,
  );
  return { message: `Tampering probability ${probability}%`, result: { probability, causes } };
};
