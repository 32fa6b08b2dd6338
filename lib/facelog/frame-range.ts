// Which frames of the input a face log processes: from `startFrame` (the input's own numbering),
// `maxFrames` of them (0 = to the end). One formula for the worker, its progress and its time limit.
export interface FrameRange {
  /** Frames in the input by its container (1 for an image). */
  frames: number;
  startFrame: number;
  maxFrames: number;
}

export function framesToProcess(range: FrameRange): number {
  const rest = Math.max(0, range.frames - range.startFrame);
  return range.maxFrames > 0 ? Math.min(range.maxFrames, rest) : rest;
}
