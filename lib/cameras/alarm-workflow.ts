// The operator's side of a camera's alarm: settings changed with their history, an alarm
// acknowledged (who, when, a comment; an event), a camera reset after a repair, and the alarms
// that came while a camera was disarmed, announced once it is armed. Each is one transaction on
// the camera's locked row, so two nodes (or two operators) change a camera in turn, and a held
// alarm is announced once.
import type { Duty } from '../duty-runner.js';
import { httpDate } from '../dates.js';
import { ServiceError } from '../errors.js';
import type { WebhookTargets } from '../webhooks/outbox.js';
import type { CameraRecord } from './camera-records.js';
import { applySettings, settingsDiff, type SettingsChange } from './camera-settings.js';
import { announceChange, armedAt, enqueueStateChanged, type OutcomeStores } from './check-outcome.js';
import { presentCameraSummary } from './present.js';

type Stores = OutcomeStores & { targets: WebhookTargets };

/** How often held alarms are looked at: an arming schedule has minutes. */
export const HELD_ALARMS_INTERVAL_MS = 15_000;

/** Applies the settings that `change` names, and records what changed in the camera's history. Returns the changes by API name. */
export async function changeSettings(o: Stores, camera: string, change: SettingsChange, actor: string | null, now: number): Promise<Record<string, { from: unknown; to: unknown }>> {
  return o.cameras.transaction(async (tx) => {
    await o.cameras.ensure(tx, camera, now);
    const before = (await o.cameras.lock(tx, camera))!;
    const settings = applySettings(before.settings, change);
    const diff = settingsDiff(before.settings, settings);
    if (Object.keys(diff).length === 0) return diff;
    await o.cameras.putSettings(tx, camera, settings);
    await o.cameras.recordHistory(tx, camera, { at: now, kind: 'settings', actor, detail: diff });
    return diff;
  });
}

/** The camera, locked, or a 404. */
async function locked(o: Stores, tx: Parameters<Parameters<Stores['cameras']['transaction']>[0]>[0], camera: string): Promise<CameraRecord> {
  const c = await o.cameras.lock(tx, camera);
  if (!c) throw new ServiceError('not_found', `no camera ${camera}`, { status: 404, expose: true });
  return c;
}

/** Acknowledges the camera's standing alarm (again, with a new comment, when it already is). */
export async function acknowledge(o: Stores, camera: string, by: string, comment: string | null, now: number): Promise<void> {
  await o.cameras.transaction(async (tx) => {
    const before = await locked(o, tx, camera);
    if (before.checksState !== 'tampered') {
      throw new ServiceError('not_in_alarm', `camera "${camera}" has no alarm to acknowledge: its checks say ${before.checksState}`, { status: 409, expose: true });
    }
    const after: CameraRecord = { ...before, acknowledgement: { at: now, by, comment } };
    await o.cameras.update(tx, after);
    await o.cameras.recordHistory(tx, camera, { at: now, kind: 'acknowledged', actor: by, detail: { comment } });
    const body = {
      status: 'success',
      event: 'camera.acknowledged',
      camera: presentCameraSummary(after),
      acknowledged_by: by,
      acknowledged_at: httpDate(now),
      comment,
    };
    await o.outbox.enqueue(tx, o.targets, { type: 'camera.acknowledged', body, callbackUrl: null }, now);
  });
}

/**
 * After a repair: the checks' state goes back to ok with no streak, so the next checks judge the
 * camera afresh; its references stay (re-baselining is its own action). An offline camera stays
 * offline until its stream answers.
 */
export async function reset(o: Stores, camera: string, by: string, comment: string | null, now: number): Promise<void> {
  await o.cameras.transaction(async (tx) => {
    const before = await locked(o, tx, camera);
    const state = before.state === 'offline' ? 'offline' : 'ok';
    const after: CameraRecord = {
      ...before,
      state,
      stateSince: state === before.state ? before.stateSince : now,
      checksState: 'ok',
      streak: 0,
      acknowledgement: null,
      alarmHeld: false,
    };
    await o.cameras.update(tx, after);
    await o.cameras.recordHistory(tx, camera, { at: now, kind: 'reset', actor: by, detail: { comment, previous_state: before.state, previous_checks_state: before.checksState } });
    if (after.state !== before.state) await announceChange(o, tx, before, after, { at: now, jobId: null, reason: 'reset', callbackUrl: null });
  });
}

/** Announces the standing alarms of cameras that are armed now; returns how many. */
export async function announceHeldAlarms(o: Stores, now: number): Promise<number> {
  let announced = 0;
  for (const c of await o.cameras.withHeldAlarms()) {
    if (!armedAt(c.settings, now)) continue;
    announced += await o.cameras.transaction(async (tx) => {
      const before = await o.cameras.lock(tx, c.id);
      // an offline camera's alarm waits until it is back (announceChange then tells both)
      if (!before || !before.alarmHeld || before.state !== 'tampered' || !armedAt(before.settings, now)) return 0;
      const after: CameraRecord = { ...before, alarmHeld: false };
      await o.cameras.update(tx, after);
      await enqueueStateChanged(o, tx, 'ok', after, { at: before.stateSince, jobId: before.lastJobId, reason: 'armed', callbackUrl: null, announcedAt: now });
      return 1;
    });
  }
  return announced;
}

/** `cameras.held-alarms`: alarms that came while disarmed, announced when their camera is armed. */
export function heldAlarmsDuty(o: Stores): Duty {
  return {
    name: 'cameras.held-alarms',
    intervalMs: HELD_ALARMS_INTERVAL_MS,
    atStart: true,
    run: async () => ({ announced: await announceHeldAlarms(o, Date.now()) }),
  };
}
