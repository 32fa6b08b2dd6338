// The tamper check of a camera's own stream, in a worker process: capture up to 25 frames, pick
// the camera's reference for the capture's size and time of day (or learn one from the capture
// when the camera has none), analyse as an uploaded clip, and leave the capture's picture for the
// operators. What it did goes back in the outcome's report for the cameras module to record.
import { AnalyticError } from '../errors.js';
import type { AnalyticOutcome } from '../jobs/analytic.js';
import { analyseWorking } from '../kamcheck/analyse.js';
import { spread, toWorking, workingSize, type WorkingPicture, type WorkingSize } from '../kamcheck/cells.js';
import { MAX_TAMPER_FRAMES } from '../kamcheck/limits.js';
import { loadReference } from '../kamcheck/reference.js';
import { quietestFrame, writeReference } from '../kamcheck/refresh.js';
import { chooseAmong, type ReferenceCandidate } from '../cameras/reference-choice.js';
import { minuteOfDay, slotLabel } from '../cameras/time-of-day.js';
import type { YuvFrame } from '../video/yuv-frame.js';
import { captureStream } from './stream-capture.js';
import type { StreamCheckInput } from './stream-check-input.js';

/** JPEG quality of a capture's picture: for the eye, not for measurement. */
const PICTURE_JPEG_QUALITY = 90;

/** What a stream check reports (the job's `report`), read by lib/cameras/check-outcome.ts. */
export interface StreamCheckReport {
  capture: { at: number; width: number; height: number; frames: number };
  /** The reference the check compared against (a learned one included). */
  referenceId: string;
  /** The camera had no reference: the capture's quietest frame became one, at `referencePath`. */
  learnedReference?: boolean;
  /** The check found 0: the capture's quietest frame renews the slot's reference, at `referencePath`. */
  renewedReference?: boolean;
}

export async function runStreamCheck(input: StreamCheckInput, progress: (message: string) => void): Promise<AnalyticOutcome> {
  const source = input.resolved;
  if (!source) throw new Error('a stream check reached the worker without its source');
  progress('Reading the camera stream');
  const frames: YuvFrame[] = [];
  const working: WorkingPicture[] = [];
  let size: WorkingSize | null = null;
  try {
    const capture = await captureStream({
      url: source.url,
      maxFrames: MAX_TAMPER_FRAMES,
      timeoutMs: source.timeoutMs,
      onFrame: (frame) => {
        size ??= workingSize(frame.width, frame.height);
        const bgr = frame.bgr();
        const w = toWorking(bgr, size);
        working.push(w.bgr === bgr ? { bgr: bgr.copy(), gray: w.gray } : w);
        frame.release(); // the planes stay in the frame's buffer for the pictures written below
        frames.push(frame);
      },
    });
    const picks = spread(frames.map((_, i) => i));
    const picked = picks.map((i) => working[i]);
    const quietest = () => frames[picks[quietestFrame(picked.map((w) => w.gray))]];
    progress(`Analysing ${capture.frames} frames`);

    const when = minuteOfDay(capture.at);
    const choice = chooseAmong(source.references, when, capture.width, capture.height);
    if ('otherSizes' in choice) {
      const sizes = choice.otherSizes.map((s) => `${s.width}x${s.height}`).join(', ');
      throw new AnalyticError(
        'resolution_mismatch',
        `the stream is ${capture.width}x${capture.height} but camera "${input.camera}" has references of ${sizes} only: set a reference of the new size`,
      );
    }
    const learned = 'none' in choice;
    if (learned) writeFrame(input.referencePath, quietest());
    const chosen: StoredReference = learned
      ? { id: input.referenceId, path: input.referencePath, slot: -1, minuteOfDay: when, width: capture.width, height: capture.height, createdAt: capture.at, capturedAt: capture.at, sourceJob: input.jobId }
      : choice.found;
    const reference = loadReference(chosen.path);
    const result = analyseWorking(reference.working, picked, reference.size);
    const renewed = !learned && result.probability === 0;
    if (renewed) writeFrame(input.referencePath, quietest());
    writeFrame(input.picturePath, frames[frames.length - 1], PICTURE_JPEG_QUALITY);
    progress(`Tampering probability ${result.probability}%`);

    const report: StreamCheckReport = {
      capture: { at: capture.at, width: capture.width, height: capture.height, frames: capture.frames },
      referenceId: chosen.id,
      ...(learned ? { learnedReference: true } : {}),
      ...(renewed ? { renewedReference: true } : {}),
    };
    const slot = learned ? Math.floor(when / source.slotMinutes) : chosen.slot;
    return {
      message: `Tampering probability ${result.probability}%`,
      result: {
        probability: result.probability,
        causes: result.causes,
        captured_at: new Date(capture.at).toUTCString(),
        reference: {
          slot: slotLabel(slot, source.slotMinutes),
          captured_at: new Date(chosen.capturedAt).toUTCString(),
          source_job: chosen.sourceJob,
          ...(learned ? { learned: true } : {}),
        },
      },
      report: report as unknown as Record<string, unknown>,
    };
  } finally {
    for (const w of working) {
      w.bgr.release();
      w.gray.release();
    }
  }
}

/** A reference the service passes to a stream check (its newest per slot). */
export interface StoredReference extends ReferenceCandidate {
  id: string;
  /** Absolute path. */
  path: string;
  capturedAt: number;
  sourceJob: string | null;
}

function writeFrame(file: string, frame: YuvFrame, quality?: number): void {
  const bgr = frame.bgr();
  try {
    writeReference(file, bgr, quality);
  } finally {
    frame.release();
  }
}
