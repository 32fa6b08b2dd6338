import { settingsFromColumn, type CameraSettings } from './camera-settings.js';

// What the cameras module keeps, as its store (camera-store.ts) gives it out: a camera's alarm
// state, its references per time-of-day slot, its checks, its state changes and its checks on
// their way; and the columns each is read from.
/** What the checks say of a camera. */
export type CheckState = 'ok' | 'tampered';
/** A camera's state: its checks', or `offline` while its stream cannot be read. */
export type CameraState = CheckState | 'offline';
/** Where a reference came from: set by hand or with a check, renewed by a check of 0, learned from a first capture, or an operator's re-baseline from a capture. */
export type ReferenceOrigin = 'uploaded' | 'renewed' | 'learned' | 'capture';

export interface CameraRecord {
  id: string;
  state: CameraState;
  /** When the state last changed (or the camera was first seen), ms. */
  stateSince: number;
  /** Consecutive checks on the other side of 50 than the state: they count towards a change. */
  streak: number;
  createdAt: number;
  lastCheckAt: number | null;
  lastJobId: string | null;
  lastProbability: number | null;
  /** References on record, every slot. */
  referenceCount: number;
  /** The state the checks say: `state` itself unless the camera is offline. */
  checksState: CheckState;
  /** Why the stream cannot be read (source-failure reason) while offline, else null. */
  offlineReason: string | null;
  settings: CameraSettings;
  /** The operator's acknowledgement of the standing alarm; a new alarm clears it. */
  acknowledgement: Acknowledgement | null;
  /** The standing alarm came while the camera was disarmed and has not been announced yet. */
  alarmHeld: boolean;
}

export interface Acknowledgement {
  at: number;
  /** Who acknowledged: the signed-in user. */
  by: string;
  comment: string | null;
}

/** What a camera's history keeps beside its checks and state changes. */
export type HistoryKind = 'settings' | 'acknowledged' | 'reset' | 'reference_set_aside';

export interface HistoryEntry {
  at: number;
  kind: HistoryKind;
  /** Who did it: the signed-in user; null when unknown. */
  actor: string | null;
  /**
   * settings: the changed settings with their values before and after; acknowledged, reset: the
   * comment; reference_set_aside: the check, the reference set aside and the older one, with the
   * clip's probability against each (check-outcome.ts).
   */
  detail: Record<string, unknown>;
}

export interface ReferenceRecord {
  id: string;
  camera: string;
  slot: number;
  capturedAt: number;
  /** Local time of day of capturedAt, whole minutes: what "nearest in time of day" compares. */
  minuteOfDay: number;
  /** The check whose clip (or upload) it came from; null when set by hand (PUT). */
  sourceJob: string | null;
  /** Path relative to DATA_DIR. */
  file: string;
  width: number;
  height: number;
  createdAt: number;
  /** Null on references of releases that did not record it; absent in a new record means unknown. */
  origin?: ReferenceOrigin | null;
}

export interface CheckRecord {
  jobId: string;
  capturedAt: number;
  finishedAt: number;
  success: boolean;
  probability: number | null;
  /** The camera's state after this check. */
  state: CameraState;
  /** A check of the camera's stream: how long after its due time its capture started, ms; null for uploads. */
  latenessMs: number | null;
  /** A check of the camera's stream: from the start of its capture to the start of its analysis on a worker, ms. */
  waitMs?: number | null;
}

export interface StateChange {
  from: CameraState;
  to: CameraState;
  at: number;
  /** The check that made it; null for none (a source removed while offline). */
  jobId: string | null;
  /** A source-failure reason for a change to offline; null otherwise. */
  reason: string | null;
}

/** What a check accepted for a camera needs when it finishes; written with its job. */
export interface PendingCheck {
  jobId: string;
  camera: string;
  /** When the clip was captured, ms. */
  capturedAt: number;
  /** The clip's size: a renewed reference has it. */
  width: number;
  height: number;
  /** Where the worker writes the clip's renewal picture when the check finds nothing (check-setup.ts), and the reference it then becomes. */
  refresh: { id: string; file: string; slot: number; minuteOfDay: number } | null;
  /**
   * A check that reads the camera's stream: when it was due (now, for one asked for by hand) and
   * where its worker writes the capture's picture (relative to DATA_DIR). Null for uploads.
   */
  capture?: { dueAt: number; file: string } | null;
  /**
   * An uploaded clip's check whose camera's events go to XProtect: where its worker writes the
   * clip's last frame, the snapshot of the event it may raise (relative to DATA_DIR).
   */
  snapshot?: string | null;
}

export interface CameraRow {
  id: string;
  state: CameraState;
  state_since: number;
  streak: number;
  created_at: number;
  last_check_at: number | null;
  last_job_id: string | null;
  last_probability: number | null;
  reference_count?: number;
  checks_state: CheckState | null;
  offline_reason: string | null;
  settings?: string | null;
  acknowledged_at?: number | null;
  acknowledged_by?: string | null;
  acknowledge_comment?: string | null;
  alarm_held?: number | null;
}

export interface HistoryRow {
  at: number;
  kind: HistoryKind;
  actor: string | null;
  detail: string | null;
}

export interface ReferenceRow {
  id: string;
  camera: string;
  slot: number;
  captured_at: number;
  minute_of_day: number;
  source_job: string | null;
  file: string;
  width: number;
  height: number;
  created_at: number;
  origin: ReferenceOrigin | null;
}

export interface CheckRow {
  job_id: string;
  captured_at: number;
  finished_at: number;
  success: number;
  probability: number | null;
  state: CameraState;
  lateness_ms: number | null;
  wait_ms: number | null;
}

export interface StateChangeRow {
  from_state: CameraState;
  to_state: CameraState;
  at: number;
  job_id: string | null;
  reason: string | null;
}

export interface PendingRow {
  job_id: string;
  camera: string;
  captured_at: number;
  width: number;
  height: number;
  refresh_id: string | null;
  refresh_file: string | null;
  refresh_slot: number | null;
  refresh_minute_of_day: number | null;
  due_at: number | null;
  capture_file: string | null;
}

export function cameraFromRow(r: CameraRow): CameraRecord {
  return {
    id: r.id,
    state: r.state,
    stateSince: r.state_since,
    streak: r.streak,
    createdAt: r.created_at,
    lastCheckAt: r.last_check_at,
    lastJobId: r.last_job_id,
    lastProbability: r.last_probability,
    referenceCount: r.reference_count ?? 0,
    checksState: r.state === 'offline' ? (r.checks_state ?? 'ok') : r.state,
    offlineReason: r.state === 'offline' ? r.offline_reason : null,
    settings: settingsFromColumn(r.settings),
    acknowledgement:
      r.acknowledged_at !== null && r.acknowledged_at !== undefined
        ? { at: Number(r.acknowledged_at), by: r.acknowledged_by ?? '', comment: r.acknowledge_comment ?? null }
        : null,
    alarmHeld: r.alarm_held === 1,
  };
}

export function historyFromRow(r: HistoryRow): HistoryEntry {
  return { at: Number(r.at), kind: r.kind, actor: r.actor, detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : {} };
}

export function referenceFromRow(r: ReferenceRow): ReferenceRecord {
  return {
    id: r.id,
    camera: r.camera,
    slot: r.slot,
    capturedAt: r.captured_at,
    minuteOfDay: r.minute_of_day,
    sourceJob: r.source_job,
    file: r.file,
    width: r.width,
    height: r.height,
    createdAt: r.created_at,
    origin: r.origin ?? null,
  };
}

export function checkFromRow(r: CheckRow): CheckRecord {
  return {
    jobId: r.job_id,
    capturedAt: r.captured_at,
    finishedAt: r.finished_at,
    success: r.success === 1,
    probability: r.probability,
    state: r.state,
    latenessMs: r.lateness_ms,
    waitMs: r.wait_ms,
  };
}

export function stateChangeFromRow(r: StateChangeRow): StateChange {
  return { from: r.from_state, to: r.to_state, at: r.at, jobId: r.job_id, reason: r.reason };
}

export function pendingFromRow(r: PendingRow): PendingCheck {
  return {
    jobId: r.job_id,
    camera: r.camera,
    capturedAt: r.captured_at,
    width: r.width,
    height: r.height,
    refresh:
      r.refresh_id && r.refresh_file ? { id: r.refresh_id, file: r.refresh_file, slot: r.refresh_slot ?? 0, minuteOfDay: r.refresh_minute_of_day ?? 0 } : null,
    capture: r.due_at !== null && r.capture_file ? { dueAt: r.due_at, file: r.capture_file } : null,
    // (the same column: a stream check's capture is its snapshot)
    snapshot: r.due_at === null ? r.capture_file : null,
  };
}
