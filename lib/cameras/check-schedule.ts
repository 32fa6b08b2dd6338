// Each camera with an enabled stream source is checked every `check_interval_s`. Every node looks
// for due checks once a second and queues each as a tamper-check job of the camera's stream
// (lib/sources/); the job waits for a worker like any other. A due check is taken by writing the
// next due time in the job's own transaction, only if the due time is still the one read (a
// compare-and-set): of racing nodes one wins, and a node that dies leaves either both the job and
// the new due time or neither. Its job's lease hands an unfinished check to a live node.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Database, Tx } from '../db/database.js';
import { StoreUnavailableError } from '../db/errors.js';
import { httpDate } from '../http/task-view.js';
import type { JobStore, JobRecord } from '../jobs/store.js';
import type { StreamCheckJobInput } from '../kamcheck/analytic.js';
import { insertPendingCheck } from './camera-store.js';
import { newCaptureFile, newReferenceFile } from './reference-files.js';
import { dueSources, earliestDue, followingDue, takeDueCheck } from './source-store.js';

/** How often a node looks for due checks. */
export const SCHEDULE_POLL_MS = 1000;
/** Due checks taken in one look. */
const DUE_BATCH = 100;

export interface CheckScheduleOptions {
  db: Database;
  store: JobStore;
  dataDir: string;
  logger: Logger;
  /** Throws when the queue is at QUEUE_LIMIT. */
  assertCapacity: () => Promise<void>;
  metrics?: { countSkippedCheck(reason: 'busy' | 'queue_full'): void };
  now?: () => number;
}

/** Why a check was not queued: its due time was taken by another node first. */
class TakenElsewhere extends Error {}

export class CheckSchedule {
  private timer: NodeJS.Timeout | null = null;
  /** A look at the next due time, when it comes before the next poll. */
  private wake: NodeJS.Timeout | null = null;
  private looking: Promise<void> | null = null;

  constructor(private readonly o: CheckScheduleOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), SCHEDULE_POLL_MS);
    this.timer.unref();
    void this.look();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake);
    this.timer = this.wake = null;
    await this.looking;
  }

  /** Queues the checks due now; resolves when done (a look already under way is joined). */
  look(): Promise<void> {
    return (this.looking ??= this.queueDue().finally(() => (this.looking = null)));
  }

  /** Queues a check of the camera's stream now, outside its schedule (POST /cameras/<camera>/check). */
  async checkNow(camera: string): Promise<JobRecord> {
    await this.o.assertCapacity();
    return (await this.submit(camera, (this.o.now ?? Date.now)(), 'manual', null))!;
  }

  private async queueDue(): Promise<void> {
    const { db, logger } = this.o;
    const now = (this.o.now ?? Date.now)();
    try {
      await this.queueDueAt(now);
      // Checks start on time, not up to a poll late.
      const next = await earliestDue(db);
      if (next !== null && this.timer && next - now < SCHEDULE_POLL_MS) {
        if (this.wake) clearTimeout(this.wake);
        this.wake = setTimeout(() => void this.look(), Math.max(0, next - (this.o.now ?? Date.now)()));
        this.wake.unref();
      }
    } catch (err) {
      if (err instanceof StoreUnavailableError) logger.debug({ err: err.message }, 'cannot look for due camera checks: the database does not answer');
      else logger.error({ err }, 'queueing due camera checks failed');
    }
  }

  private async queueDueAt(now: number): Promise<void> {
    const { db, store, logger, metrics } = this.o;
    for (const due of await dueSources(db, now, DUE_BATCH)) {
      const next = followingDue(due.nextCheckAt, due.intervalS, now);
      const skip = async (reason: 'busy' | 'queue_full') => {
        if (await db.transaction((tx) => takeDueCheck(tx, due.camera, due.nextCheckAt, next, null))) {
          metrics?.countSkippedCheck(reason);
          logger.warn({ camera: due.camera, reason }, 'scheduled camera check skipped');
        }
      };
      // One check of a camera at a time: a box that cannot keep up skips, it does not pile up.
      const previous = due.pendingJob ? await store.get(due.pendingJob) : null;
      if (previous && (previous.state === 'queued' || previous.state === 'processing')) {
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
      await this.submit(due.camera, due.nextCheckAt, 'schedule', (tx, jobId) => takeDueCheck(tx, due.camera, due.nextCheckAt, next, jobId));
    }
  }

  /** The job of one check; null when `take` found the due check taken by another node. */
  private async submit(
    camera: string,
    dueAt: number,
    trigger: 'schedule' | 'manual',
    take: ((tx: Tx, jobId: string) => Promise<boolean>) | null,
  ): Promise<JobRecord | null> {
    const { store, dataDir, logger } = this.o;
    const id = randomUUID();
    const picture = newCaptureFile(dataDir);
    const reference = newReferenceFile(dataDir, 'jpg', false);
    const input: StreamCheckJobInput & { taskFields: Record<string, unknown> } = {
      stream: { jobId: id, camera, dueAt, picturePath: picture.absolute, referenceId: reference.id, referencePath: reference.absolute },
      taskFields: { camera, stream_check: { trigger, due_at: httpDate(dueAt) } },
    };
    try {
      const job = await store.insert(
        { id, analytic: 'kamcheck', input: input as unknown as Record<string, unknown> },
        {
          alongside: async (tx) => {
            if (take && !(await take(tx, id))) throw new TakenElsewhere();
            await insertPendingCheck(tx, {
              jobId: id,
              camera,
              capturedAt: dueAt,
              width: 0,
              height: 0,
              refresh: { id: reference.id, file: reference.file, slot: 0, minuteOfDay: 0 },
              capture: { dueAt, file: picture.file },
            });
          },
        },
      );
      logger.debug({ job_id: id, camera, trigger }, 'camera check queued');
      return job;
    } catch (err) {
      if (err instanceof TakenElsewhere) return null;
      throw err;
    }
  }
}
