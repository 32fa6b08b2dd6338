// The tamper check as a worker job: paths in, probability and causes out; or a camera's stream in
// (lib/sources/stream-check.ts).
import type { AnalyticRunner } from '../jobs/analytic.js';
import type { KamcheckInput } from './analytic.js';
import { runKamcheck } from './run.js';
import type { RenewedReferenceReport } from '../cameras/check-outcome.js';

export const runKamcheckJob: AnalyticRunner<KamcheckInput> = async (input, progress) => {
  if (input.stream) return (await import('../sources/stream-check.js')).runStreamCheck(input.stream, progress);
  const { probability, causes, renewedReference } = await runKamcheck(
    { videoPath: input.videoPath, imagePath: input.imagePath, refreshPath: input.refreshPath },
    progress,
  );
  // The camera's bookkeeping (lib/cameras/check-outcome.ts) records the renewed reference from this report.
  const report: RenewedReferenceReport | undefined = renewedReference ? { renewedReference } : undefined;
  return { message: `Tampering probability ${probability}%`, result: { probability, causes }, report: report as Record<string, unknown> | undefined };
};
