// What a finished tamper check of a camera changes, in the transaction that records its outcome:
// the check joins the camera's history, the alarm state moves with hysteresis (at the camera's
// sensitivity and delays), a probability of 0 renews the slot's reference from the clip, and a
// change of state becomes an event, unless it is an alarm while the camera is disarmed: that one
// is held back until the camera is armed (alarm-workflow.ts). A check of
// the camera's own stream also records its capture: its picture, a reference learned from it, and
// failures to read the stream, which make the camera `offline` after OFFLINE_AFTER in a row.
import fs from 'node:fs';
import path from 'node:path';
import type { Tx } from '../db/database.js';
import { httpDate } from '../dates.js';
import type { JobRecord } from '../jobs/job-record.js';
import type { FinishHook } from '../jobs/store.js';
import { sourceFailureReason } from '../sources/source-failure.js';
import type { SourceStore } from '../sources/source-store.js';
import type { WebhookTargets } from '../webhooks/outbox.js';
import type { OutboxStore } from '../webhooks/outbox-store.js';
import type { CameraRecord, CameraState, CheckState, PendingCheck, ReferenceOrigin } from './camera-records.js';
import type { CameraStore } from './camera-store.js';
import { isArmed } from './armed.js';
import { applianceTimeZone, type CameraSettings } from './camera-settings.js';
import { milestoneEventXml } from '../milestone/camera-event.js';
import { presentCameraSummary } from './present.js';
import { TAMPERED_AT } from './sensitivity.js';

/** The stores a check's outcome writes to, in the transaction of the job's outcome. */
export interface OutcomeStores {
  cameras: CameraStore;
  sources: SourceStore;
  outbox: OutboxStore;
}

export interface CameraHookOptions extends OutcomeStores {
  alarmAfter: number;
  clearAfter: number;
  /** Consecutive failed captures that make a camera offline. */
  offlineAfter: number;
  targets: WebhookTargets;
  /** DATA_DIR: where the check's pictures are, for the snapshot of an XProtect event. */
  dataDir: string;
  /** Told, for each check of a camera's stream, how late its capture started after it was due, and how long from then its analysis waited, seconds. */
  onStreamCheck?: (latenessS: number, waitS: number | null) => void;
}

/** What the tamper-check worker reports when it wrote the clip's renewal picture as the camera's next reference. */
export interface CheckReport {
  /** The check found nothing (lib/cameras/check-setup.ts, FIRST_OF_SLOT_BELOW): the renewal picture is at the check's refresh place. */
  renewedReference?: boolean;
  /** A stream check without a reference: the renewal picture, at the learn place, was its reference. */
  learnedReference?: boolean;
  /** The id of the reference the check's second opinion took out of its slot (check-setup.ts, SecondOpinion). */
  setAsideReference?: string;
}

/** What decides a camera's checks' state: the probability that counts as tampered, and the streaks that turn it. */
export interface AlarmRule {
  tamperedAt: number;
  alarmAfter: number;
  clearAfter: number;
}

/** The camera's own rule: its sensitivity, and its delays where it has them, else the appliance's. */
export function alarmRule(settings: CameraSettings, defaults: { alarmAfter: number; clearAfter: number }): AlarmRule {
  return {
    tamperedAt: TAMPERED_AT[settings.sensitivity],
    alarmAfter: settings.alarmAfter ?? defaults.alarmAfter,
    clearAfter: settings.clearAfter ?? defaults.clearAfter,
  };
}

/** Whether the camera's arming schedule arms it at `at`. */
export function armedAt(settings: CameraSettings, at: number): boolean {
  return isArmed(settings.armed, settings.timeZone ?? applianceTimeZone(), at);
}

/**
 * The checks' state after one more check. A check on the state's own side of the line resets the
 * streak; one on the other side adds to it, and the state turns when the streak reaches its
 * threshold.
 */
export function nextState(state: CheckState, streak: number, probability: number, o: AlarmRule): { state: CheckState; streak: number } {
  const tampered = probability >= o.tamperedAt;
  const against = state === 'ok' ? tampered : !tampered;
  if (!against) return { state, streak: 0 };
  const needed = state === 'ok' ? o.alarmAfter : o.clearAfter;
  if (streak + 1 >= needed) return { state: state === 'ok' ? 'tampered' : 'ok', streak: 0 };
  return { state, streak: streak + 1 };
}

export function cameraFinishHook(o: CameraHookOptions): FinishHook {
  const { cameras } = o;
  return async (tx, job) => {
    const check = await cameras.takePendingCheck(tx, job.id);
    if (!check) return;
    // Checks of one camera finishing together count in turn.
    const before = await cameras.lock(tx, check.camera);
    if (!before) return; // deleted meanwhile
    const at = job.finishedAt ?? Date.now();
    const success = job.state === 'done';
    const probability = success ? Number(job.result?.probability) : null;
    const checks =
      probability === null || !Number.isFinite(probability)
        ? { state: before.checksState, streak: before.streak }
        : nextState(before.checksState, before.streak, probability, alarmRule(before.settings, o));
    let state: CameraState = before.state === 'offline' ? 'offline' : checks.state;
    let offlineReason = before.offlineReason;
    if (check.capture) {
      const reached = await recordStreamCapture(o.sources, tx, check, job, at, o.offlineAfter);
      if (reached === 'back') state = checks.state;
      else if (reached !== 'unchanged') {
        offlineReason = reached.reason;
        if (reached.offline) state = 'offline';
      }
    }
    const changed = state !== before.state;
    const stateSince = changed ? at : before.stateSince;
    const newAlarm = before.checksState === 'ok' && checks.state === 'tampered';
    const after: CameraRecord = {
      ...before,
      state,
      stateSince,
      streak: checks.streak,
      checksState: checks.state,
      offlineReason: state === 'offline' ? offlineReason : null,
      lastCheckAt: at,
      lastJobId: job.id,
      lastProbability: probability,
      // a new alarm needs a new acknowledgement; one that comes while disarmed waits to be announced
      acknowledgement: newAlarm ? null : before.acknowledgement,
      // (a held alarm whose camera changes state while armed is announced with that change)
      alarmHeld: checks.state === 'tampered' && (newAlarm || before.alarmHeld) && !(changed && armedAt(before.settings, at)),
    };
    await cameras.update(tx, after);
    const latenessMs = check.capture ? Math.max(0, check.capturedAt - check.capture.dueAt) : null;
    const waitMs = check.capture && job.startedAt !== null ? Math.max(0, job.startedAt - check.capturedAt) : null;
    if (latenessMs !== null) o.onStreamCheck?.(latenessMs / 1000, waitMs === null ? null : waitMs / 1000);
    await cameras.recordCheck(tx, check.camera, { jobId: job.id, capturedAt: check.capturedAt, finishedAt: at, success, probability, state, latenessMs, waitMs });
    const report = job.report as CheckReport | null;
    if (success && report?.learnedReference) await renewReference(cameras, tx, check, job, at, 'learned');
    else if (success && report?.renewedReference) await renewReference(cameras, tx, check, job, at, 'renewed');
    if (success && report?.setAsideReference && (await cameras.setAsideReference(tx, check.camera, report.setAsideReference))) {
      // the operator's record of what the appliance did to the camera's references (the console's history)
      const second = job.result?.second_opinion as { reference: unknown; probability: number; first_probability: number } | undefined;
      const taskFields = job.input.taskFields as { reference?: unknown } | undefined;
      await cameras.recordHistory(tx, check.camera, {
        at,
        kind: 'reference_set_aside',
        actor: null,
        detail: {
          job_id: job.id,
          reference: taskFields?.reference ?? null,
          probability: second?.first_probability ?? null,
          older_reference: second?.reference ?? null,
          older_probability: second?.probability ?? null,
        },
      });
    }
    if (changed) {
      const callbackUrl = typeof job.input.callbackUrl === 'string' ? job.input.callbackUrl : null;
      // the frame the worker wrote: a stream check's capture, or an uploaded clip's last frame
      const frame = success ? (check.capture?.file ?? check.snapshot ?? null) : null;
      const causes = success && job.result?.causes && typeof job.result.causes === 'object' ? (job.result.causes as Record<string, number>) : null;
      const seen = { causes, picture: frame ? { absolute: path.join(o.dataDir, frame), width: check.width, height: check.height } : null };
      await announceChange(o, tx, before, after, { at, jobId: job.id, reason: state === 'offline' ? offlineReason : null, callbackUrl, check: seen });
    }
  };
}

/**
 * Records what a stream check's capture gave. Whether the camera comes back (a frame arrived while
 * offline), is (still) failing with a reason, or is unchanged (the check failed for another cause,
 * or the source is gone).
 */
async function recordStreamCapture(
  sources: SourceStore,
  tx: Tx,
  check: PendingCheck,
  job: JobRecord,
  at: number,
  offlineAfter: number,
): Promise<'back' | 'unchanged' | { reason: string; offline: boolean }> {
  const source = await sources.get(check.camera, tx);
  if (!source) return 'unchanged';
  const reason = job.state === 'failed' ? sourceFailureReason(job.error?.code) : null;
  if (job.state === 'done') {
    const picture = { file: check.capture!.file, at: check.capturedAt, width: check.width, height: check.height };
    await sources.recordCapture(tx, check.camera, { at: check.capturedAt, ok: true, reason: null, jobId: job.id, failures: 0, picture });
    return 'back';
  }
  if (reason) {
    const failures = source.failures + 1;
    await sources.recordCapture(tx, check.camera, { at, ok: false, reason, jobId: job.id, failures, picture: null });
    return { reason, offline: failures >= offlineAfter };
  }
  // Failed for another cause than the stream (a resolution that matches no reference, a crash).
  await sources.recordCapture(tx, check.camera, { at, ok: false, reason: job.error?.code ?? null, jobId: job.id, failures: source.failures, picture: null });
  return 'unchanged';
}

/** The worker wrote the clip's renewal picture where the check's input said; it becomes the slot's reference. */
async function renewReference(cameras: CameraStore, tx: Tx, check: PendingCheck, job: JobRecord, at: number, origin: ReferenceOrigin): Promise<void> {
  const refresh = check.refresh;
  if (!refresh) return;
  await cameras.insertReference(tx, {
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
    origin,
  });
}

/**
 * A camera whose source was removed while it was offline goes back to the state its checks say:
 * nothing reads its stream any more, so nothing can say it is offline.
 */
export async function leaveOffline(o: OutcomeStores & { targets: WebhookTargets }, tx: Tx, camera: string, at: number): Promise<void> {
  const before = await o.cameras.lock(tx, camera);
  if (!before || before.state !== 'offline') return;
  const after: CameraRecord = { ...before, state: before.checksState, stateSince: at, offlineReason: null };
  await o.cameras.update(tx, after);
  await announceChange(o, tx, before, after, { at, jobId: null, reason: 'source_removed', callbackUrl: null });
}

/**
 * A change of a camera's state: kept in its state changes, and a `camera.state_changed` event;
 * but an alarm held back while the camera is disarmed, or its end before it was announced, is
 * no event.
 */
export async function announceChange(
  o: OutcomeStores & { targets: WebhookTargets },
  tx: Tx,
  before: CameraRecord,
  after: CameraRecord,
  c: { at: number; jobId: string | null; reason: string | null; callbackUrl: string | null; check?: CheckSeen },
): Promise<void> {
  await o.cameras.recordStateChange(tx, after.id, { from: before.state, to: after.state, at: c.at, jobId: c.jobId, reason: c.reason });
  const heldBack = (after.state === 'tampered' && after.alarmHeld) || (before.state === 'tampered' && before.alarmHeld && after.state === 'ok');
  if (heldBack) return;
  await enqueueStateChanged(o, tx, before.state, after, c);
}

/** The `camera.state_changed` event of a change to `after` (from `previous`), now or when a held alarm is announced. */
export async function enqueueStateChanged(
  o: OutcomeStores & { targets: WebhookTargets },
  tx: Tx,
  previous: CameraRecord['state'],
  after: CameraRecord,
  c: { at: number; jobId: string | null; reason: string | null; callbackUrl: string | null; announcedAt?: number; check?: CheckSeen },
): Promise<void> {
  const body = {
    status: 'success',
    event: 'camera.state_changed',
    camera: presentCameraSummary(after),
    previous_state: previous,
    state: after.state,
    changed_at: httpDate(c.at),
    job_id: c.jobId,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.announcedAt !== undefined ? { announced_at: httpDate(c.announcedAt) } : {}),
  };
  const milestone = o.targets.milestoneUrl && after.settings.milestone ? after.settings.milestone : null;
  // the snapshot is read now: the capture's file goes with the next capture, the event may wait for XProtect longer
  const snapshot = milestone && c.check?.picture ? await readSnapshot(c.check.picture) : null;
  const document = milestone
    ? (eventId: string) =>
        milestoneEventXml(eventId, milestone, {
          previous,
          after,
          at: c.at,
          announcedAt: c.announcedAt,
          jobId: c.jobId,
          reason: c.reason,
          causes: c.check?.causes ?? null,
          tamperedAt: TAMPERED_AT[after.settings.sensitivity],
          snapshot,
        })
    : null;
  await o.outbox.enqueue(tx, o.targets, { type: 'camera.state_changed', body, callbackUrl: c.callbackUrl, milestone: document }, c.announcedAt ?? c.at);
}

/** What the check that changed a camera's state saw: its causes and the frame its worker wrote. */
export interface CheckSeen {
  causes: Record<string, number> | null;
  picture: { absolute: string; width: number; height: number } | null;
}

/** The frame, or null when it is gone (an event without a snapshot is still an event). */
async function readSnapshot(p: { absolute: string; width: number; height: number }): Promise<{ jpeg: Buffer; width: number; height: number } | null> {
  try {
    return { jpeg: await fs.promises.readFile(p.absolute), width: p.width, height: p.height };
  } catch {
    return null;
  }
}
