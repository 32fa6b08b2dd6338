// What a finished tamper check of a camera changes, in the transaction that records its outcome:
// the check joins the camera's history, the alarm state moves with hysteresis, a probability of 0
// renews the slot's reference from the clip, and a change of state becomes an event.
import type { FinishHook, JobRecord } from '../jobs/store.js';
import type { Tx } from '../db/database.js';
import { httpDate } from '../http/task-view.js';
import { enqueueEvent, type WebhookTargets } from '../webhooks/outbox.js';
import { insertReference, lockCamera, recordCheck, takePendingCheck, updateCamera, type CameraRecord, type CameraState, type PendingCheck } from './camera-store.js';
import { presentCameraSummary } from './present.js';

export interface CameraHookOptions {
  alarmAfter: number;
  clearAfter: number;
  targets: WebhookTargets;
}

/** What the tamper-check worker reports when it wrote the clip's quietest frame as the camera's next reference. */
export interface RenewedReferenceReport {
  renewedReference?: boolean;
}

/** At or above this probability a check counts as tampered. */
export const TAMPERED_AT = 50;

/**
 * The state after one more check. A check on the state's own side of 50 resets the streak; one
 * on the other side adds to it, and the state turns when the streak reaches its threshold.
 */
export function nextState(state: CameraState, streak: number, probability: number, o: { alarmAfter: number; clearAfter: number }): { state: CameraState; streak: number } {
  const tampered = probability >= TAMPERED_AT;
  const against = state === 'ok' ? tampered : !tampered;
  if (!against) return { state, streak: 0 };
  const needed = state === 'ok' ? o.alarmAfter : o.clearAfter;
  if (streak + 1 >= needed) return { state: state === 'ok' ? 'tampered' : 'ok', streak: 0 };
  return { state, streak: streak + 1 };
}

export function cameraFinishHook(o: CameraHookOptions): FinishHook {
  return async (tx, job) => {
    const check = await takePendingCheck(tx, job.id);
    if (!check) return;
    // Checks of one camera finishing together count in turn.
    const before = await lockCamera(tx, check.camera);
    if (!before) return; // deleted meanwhile
    const at = job.finishedAt ?? Date.now();
    const success = job.state === 'done';
    const probability = success ? Number(job.result?.probability) : null;
    const next = probability === null || !Number.isFinite(probability) ? { state: before.state, streak: before.streak } : nextState(before.state, before.streak, probability, o);
    const changed = next.state !== before.state;
    const stateSince = changed ? at : before.stateSince;
    const after: CameraRecord = { ...before, state: next.state, stateSince, streak: next.streak, lastCheckAt: at, lastJobId: job.id, lastProbability: probability };
    await updateCamera(tx, after);
    await recordCheck(tx, check.camera, { jobId: job.id, capturedAt: check.capturedAt, finishedAt: at, success, probability, state: next.state });
    if (probability === 0 && (job.report as RenewedReferenceReport | null)?.renewedReference) await renewReference(tx, check, job, at);
    if (changed) {
      await enqueueEvent(
        tx,
        o.targets,
        {
          type: 'camera.state_changed',
          body: {
            status: 'success',
            event: 'camera.state_changed',
            camera: presentCameraSummary(after),
            previous_state: before.state,
            state: next.state,
            changed_at: httpDate(at),
            job_id: job.id,
          },
          callbackUrl: typeof job.input.callbackUrl === 'string' ? job.input.callbackUrl : null,
        },
        at,
      );
    }
  };
}

/** The worker wrote the clip's quietest frame where the check's input said; it becomes the slot's reference. */
async function renewReference(tx: Tx, check: PendingCheck, job: JobRecord, at: number): Promise<void> {
  const refresh = check.refresh;
  if (!refresh) return;
  await insertReference(tx, {
    id: refresh.id,
    camera: check.camera,
    slot: refresh.slot,
    capturedAt: check.capturedAt,
    minuteOfDay: refresh.minuteOfDay,
    sourceJob: job.id,
    file: refresh.file,
    width: check.width,
    height: check.height,
    createdAt: at,
  });
}
