// The tamper check as a worker job: paths in, probability and causes out.
import type { AnalyticRunner } from '../jobs/analytic.js';
import { AnalyticError } from '../errors.js';
import type { KamcheckInput } from './analytic.js';
import { runKamcheck } from './run.js';
import type { CheckReport } from '../cameras/check-outcome.js';

export const runKamcheckJob: AnalyticRunner<KamcheckInput> = async (input, progress) => {
  if (input.captureFailure) throw new AnalyticError(input.captureFailure.code, input.captureFailure.message);
  const { probability, causes, notJudged, tooDark, notCounted, renewedReference, learnedReference, secondOpinion } = await runKamcheck(
    {
      videoPath: input.videoPath,
      imagePath: input.imagePath,
      refreshPath: input.refreshPath,
      refreshBelow: input.refreshBelow,
      learnPath: input.learnPath,
      picturePath: input.picturePath,
      ignoreAreas: input.ignoreAreas,
      darkIsTamper: input.darkIsTamper,
      secondOpinion: input.secondOpinion,
    },
    progress,
  );
  // The camera's bookkeeping (lib/cameras/check-outcome.ts) records the new reference from this report.
  const report: CheckReport = {
    ...(renewedReference ? { renewedReference } : {}),
    ...(learnedReference ? { learnedReference } : {}),
    ...(secondOpinion?.setAside ? { setAsideReference: input.secondOpinion!.setAside } : {}),
  };
  const second = secondOpinion && {
    second_opinion: {
      reference: input.secondOpinion!.reference,
      probability: secondOpinion.probability,
      first_probability: secondOpinion.firstProbability,
      reference_set_aside: secondOpinion.setAside,
    },
  };
  return {
    message: `Tampering probability ${probability}%`,
    result: { probability, causes, not_judged: notJudged, too_dark: tooDark, not_counted: notCounted, ...second },
    report: Object.keys(report).length > 0 ? (report as Record<string, unknown>) : undefined,
  };
};
