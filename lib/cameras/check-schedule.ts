// Each camera with an enabled stream source is checked every `check_interval_s`. Every node looks
// for due checks once a second (and at the next due time when it comes sooner). A due check is
// taken with a compare-and-set on its due time, which also marks the capture as this node's until
// a deadline: of racing nodes one wins, and the capture of a node that dies is taken over once its
// deadline passes. The node cuts the clip from the stream (lib/sources/stream-capture.ts: a stream
// copy: no decoding, many at a time) and queues it as a tamper-check job, which waits for a worker
// like any other; a capture that failed is queued as a job that fails with its reason, so that
// every attempt reaches the camera's record (offline after OFFLINE_AFTER failures in a row).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Tx } from '../db/database.js';
import { DatabaseUnavailableError } from '../db/errors.js';
import { httpDate } from '../dates.js';
import type { JobRecord } from '../jobs/job-record.js';
import type { JobStore } from '../jobs/store.js';
import type { KamcheckInput } from '../kamcheck/analytic.js';
import { MAX_TAMPER_FRAMES } from '../kamcheck/limits.js';
import type { DataFile } from '../data-files.js';
import { newCaptureFile } from '../sources/capture-files.js';
import { captureClip } from '../sources/stream-capture.js';
import { SourceFailure } from '../sources/source-failure.js';
import { followingDue, type SourceStore } from '../sources/source-store.js';
import { MediaProbeError, probeMedia } from '../video/probe.js';
import type { PendingCheck } from './camera-records.js';
import type { CameraStore } from './camera-store.js';
import { CheckRefused, setUpCameraCheck } from './check-setup.js';

/** How often a node looks for due checks. */
export const SCHEDULE_POLL_MS = 1000;
/**
 * Captures one node runs at a time: each mostly waits for the camera (25 frames of a live stream
 * take a second); its ffmpeg costs about 100 ms of CPU, mostly its own start.
 */
export const CAPTURES_PER_NODE = 32;
/** A capture's hold beyond its own time limit (twice SOURCE_TIMEOUT_S): time to probe and queue the clip. */
const HOLD_MARGIN_MS = 10_000;

export interface CheckScheduleOptions {
  jobs: JobStore;
  cameras: CameraStore;
  sources: SourceStore;
  dataDir: string;
  /** Where jobs keep their input: `<jobsDir>/<job_id>/input/`. */
  jobsDir: string;
  sourceTimeoutMs: number;
  slotMinutes: number;
  logger: Logger;
  /** Throws when the queue is at QUEUE_LIMIT. */
  assertCapacity: () => Promise<void>;
  metrics?: { countSkippedCheck(reason: 'busy' | 'queue_full'): void };
}

type Trigger = 'schedule' | 'manual';

/** The capture's hold was taken over by another node: this node's clip is not queued. */
class HoldLost extends Error {}

export class CheckSchedule {
  private timer: NodeJS.Timeout | null = null;
  /** A look at the next due time, when it comes before the next poll. */
  private wake: NodeJS.Timeout | null = null;
  private looking: Promise<void> | null = null;
  private readonly captures = new PQueue({ concurrency: CAPTURES_PER_NODE });

  constructor(private readonly o: CheckScheduleOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), SCHEDULE_POLL_MS);
    this.timer.unref();
    void this.look();
  }

  /** Stops looking; captures under way finish and queue their checks. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake);
    this.timer = this.wake = null;
    await this.looking;
    await this.captures.onIdle();
  }

  /** Takes the checks due now; resolves when they are taken (their captures go on). A look under way is joined. */
  look(): Promise<void> {
    return (this.looking ??= this.takeDue().finally(() => (this.looking = null)));
  }

  /** Captures the camera's stream now, outside its schedule (POST /cameras/<camera>/check), and queues its check. */
  async checkNow(camera: string): Promise<JobRecord> {
    await this.o.assertCapacity();
    return this.captureAndQueue(camera, Date.now(), 'manual', null);
  }

  private async takeDue(): Promise<void> {
    const { sources, logger } = this.o;
    try {
      const now = Date.now();
      const room = CAPTURES_PER_NODE - this.captures.size - this.captures.pending;
      if (room > 0) await this.takeDueAt(now, room);
      // Checks start on time, not up to a poll late.
      const next = await sources.earliestDue();
      if (next !== null && this.timer && next - now < SCHEDULE_POLL_MS) {
        if (this.wake) clearTimeout(this.wake);
        this.wake = setTimeout(() => void this.look(), Math.max(0, next - Date.now()));
        this.wake.unref();
      }
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) logger.debug({ err: err.message }, 'cannot look for due camera checks: the database does not answer');
      else logger.error({ err }, 'taking due camera checks failed');
    }
  }

  private async takeDueAt(now: number, room: number): Promise<void> {
    const { jobs, sources, logger, metrics } = this.o;
    const until = now + 2 * this.o.sourceTimeoutMs + HOLD_MARGIN_MS;
    for (const due of await sources.due(now, room)) {
      if (due.stale) {
        if (await sources.retakeCapture(due.camera, due.dueAt, due.stale.until, until)) {
          logger.warn({ camera: due.camera }, 'taking over a camera capture whose node stopped');
          this.startCapture(due.camera, due.dueAt, 'schedule', until);
        }
        continue;
      }
      const next = followingDue(due.dueAt, due.intervalS, now);
      const skip = async (reason: 'busy' | 'queue_full') => {
        if (await sources.skipDue(due.camera, due.dueAt, next)) {
          metrics?.countSkippedCheck(reason);
          logger.warn({ camera: due.camera, reason }, 'scheduled camera check skipped');
        }
      };
      // One check of a camera at a time: a box that cannot keep up skips, it does not pile up.
      const previous = due.pendingJob && !due.capturing ? await jobs.get(due.pendingJob) : null;
      if (due.capturing || (previous && (previous.state === 'queued' || previous.state === 'processing'))) {
        await skip('busy');
        continue;
      }
      const full = await this.o.assertCapacity().then(
        () => false,
        () => true,
      );
      if (full) {
        await skip('queue_full');
        continue;
      }
      if (await sources.takeDue(due.camera, due.dueAt, next, until)) this.startCapture(due.camera, due.dueAt, 'schedule', until);
    }
  }

  private startCapture(camera: string, dueAt: number, trigger: Trigger, until: number): void {
    void this.captures.add(() =>
      this.captureAndQueue(camera, dueAt, trigger, until).catch((err) => {
        if (err instanceof HoldLost) this.o.logger.warn({ camera }, 'another node took over this capture; its clip is dropped');
        else this.o.logger.error({ err, camera }, 'a camera check could not be queued; its capture is taken over when its hold runs out');
      }),
    );
  }

  /**
   * Cuts the clip and queues its check (or the failure): the job's input is as an upload's, set up
   * by the same function (check-setup.ts), with a place to learn a reference when the camera has
   * none. `until`: the hold of a scheduled capture, ended in the job's transaction.
   */
  private async captureAndQueue(camera: string, dueAt: number, trigger: Trigger, until: number | null): Promise<JobRecord> {
    const { jobs, sources, jobsDir, logger } = this.o;
    const id = randomUUID();
    const inputDir = path.join(jobsDir, id, 'input');
    const capture = { id, camera, dueAt, trigger, picture: newCaptureFile(this.o.dataDir) };
    const attemptAt = Date.now();
    let check: QueuedCheck;
    try {
      check = await this.captureCheck(capture, inputDir);
    } catch (err) {
      if (!(err instanceof SourceFailure)) {
        await fs.rm(path.dirname(inputDir), { recursive: true, force: true });
        throw err;
      }
      check = this.failedCheck(capture, attemptAt, { width: 0, height: 0 }, err);
    }
    try {
      const job = await jobs.insert(
        { id, analytic: 'kamcheck', input: { ...check.input, taskFields: check.taskFields } as unknown as Record<string, unknown> },
        {
          alongside: async (tx: Tx) => {
            if (until !== null && !(await sources.endCapture(tx, camera, dueAt, until, id))) throw new HoldLost();
            await check.record(tx);
          },
        },
      );
      logger.debug({ job_id: id, camera, trigger, failed: 'captureFailure' in check.input }, 'camera check queued');
      return job;
    } catch (err) {
      await fs.rm(path.dirname(inputDir), { recursive: true, force: true });
      throw err;
    }
  }

  /** Cuts the clip from the camera's stream into `inputDir` and sets its check up; throws SourceFailure when the stream gives none. */
  private async captureCheck(c: Capture, inputDir: string): Promise<QueuedCheck> {
    const { cameras, sources, dataDir, slotMinutes, sourceTimeoutMs } = this.o;
    const source = await sources.get(c.camera);
    if (!source) throw new SourceFailure('stream_error', `camera "${c.camera}" has no stream source any more`);
    await fs.mkdir(inputDir, { recursive: true });
    const videoPath = path.join(inputDir, 'video.mp4');
    const { startedAt } = await captureClip({ url: source.url, file: videoPath, maxFrames: MAX_TAMPER_FRAMES, timeoutMs: sourceTimeoutMs });
    const clip = await probeMedia(videoPath).catch((err) => {
      if (err instanceof MediaProbeError) throw new SourceFailure('stream_error', `the clip cut from the stream cannot be read: ${err.message}`);
      throw err;
    });
    try {
      const check = await setUpCameraCheck(
        { cameras, dataDir, slotMinutes },
        { jobId: c.id, camera: c.camera, capturedAt: startedAt, clip, uploaded: null, whenNone: 'learn', capture: { dueAt: c.dueAt, file: c.picture.file } },
      );
      return {
        input: { videoPath, videoName: 'stream capture', picturePath: c.picture.absolute, ...check.reference },
        taskFields: { ...check.taskFields, ...streamCheckFields(c) },
        record: check.record,
      };
    } catch (err) {
      if (!(err instanceof CheckRefused)) throw err;
      return this.failedCheck(c, startedAt, clip, err);
    }
  }

  /** A check that fails with its reason when it runs, so that the attempt reaches the camera's record. */
  private failedCheck(c: Capture, capturedAt: number, size: { width: number; height: number }, err: { code: string; message: string }): QueuedCheck {
    const pending: PendingCheck = { jobId: c.id, camera: c.camera, capturedAt, ...size, refresh: null, capture: { dueAt: c.dueAt, file: c.picture.file } };
    return {
      input: { captureFailure: { code: err.code, message: err.message } },
      taskFields: { camera: c.camera, ...streamCheckFields(c), ...(size.width > 0 ? { captured_at: httpDate(capturedAt) } : {}) },
      record: (tx) => this.o.cameras.insertPendingCheck(tx, pending),
    };
  }
}

/** A check of a camera's stream on its way to the queue. */
interface Capture {
  /** The check's job id. */
  id: string;
  camera: string;
  dueAt: number;
  trigger: Trigger;
  /** Where the worker writes the capture's picture. */
  picture: DataFile;
}

/** What a stream check's job is queued with, and what its transaction writes beside it. */
interface QueuedCheck {
  input: KamcheckInput;
  taskFields: Record<string, unknown>;
  record(tx: Tx): Promise<void>;
}

function streamCheckFields(c: Capture): Record<string, unknown> {
  return { stream_check: { trigger: c.trigger, due_at: httpDate(c.dueAt) } };
}
