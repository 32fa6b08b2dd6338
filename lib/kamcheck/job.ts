// The tamper check as a worker job: paths in, probability and causes out.
import type { AnalyticRunner } from '../jobs/analytic.js';
import type { KamcheckInput } from './analytic.js';
import { runKamcheck } from './run.js';

export const runKamcheckJob: AnalyticRunner<KamcheckInput> = async (input, progress) => {
  const { probability, causes } = await runKamcheck(
    { videoPath: input.videoPath, imagePath: input.imagePath, refreshPath: input.refreshPath },
    progress,
  );
  return { message: `Tampering probability ${probability}%`, result: { probability, causes } };
};
