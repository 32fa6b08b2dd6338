// The API's resources as the console reads them (openapi/openapi.json is the reference). The
// camera-source fields arrive with the appliance's stream sources; the pages show them only
// when an answer has them.
import type { Role } from './role.js';

export type CameraState = 'ok' | 'tampered' | 'offline';

export interface LastCapture {
  at: string;
  outcome: 'ok' | 'failed';
  /** A failure's code (SourceFailureReason) or a failed check's error code. */
  reason: string | null;
  job_id?: string;
  image: string | null;
}

export interface CameraSource {
  url: string;
  check_interval_s: number;
  enabled: boolean;
  next_check_at: string | null;
  last_capture: LastCapture | null;
  /** The last frame of the last good capture (it stays when a later capture fails). */
  picture?: { captured_at: string; width: number; height: number; image: string; thumbnail?: string } | null;
  offline_reason: string | null;
}

export interface CameraSummary {
  camera: string;
  state: CameraState;
  state_since: string;
  last_check: { job_id: string; probability: number | null; finish_time: string } | null;
  reference_count: number;
  /** The probability at which its checks count as tampered: its sensitivity's line (lists and details). */
  tampered_at?: number;
  /** While offline: why the stream cannot be read (a SourceFailureReason). */
  offline_reason?: string | null;
  reference_image?: string | null;
  /** A small copy of reference_image, for lists. */
  reference_thumbnail?: string | null;
  source?: CameraSource | null;
  /** The operator's acknowledgement of the standing alarm; null when there is none. */
  acknowledgement?: Acknowledgement | null;
}

export interface Acknowledgement {
  acknowledged_by: string;
  acknowledged_at: string;
  comment: string | null;
}

export type Sensitivity = 'low' | 'medium' | 'high';
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
/** A polygon of [x, y] points, fractions of the picture. */
export type IgnoreArea = [number, number][];

export interface ArmedRange {
  days: Weekday[];
  from: string;
  to: string;
}

export interface CameraSettings {
  sensitivity: Sensitivity;
  alarm_after: number;
  clear_after: number;
  ignore_areas: IgnoreArea[];
  armed: ArmedRange[];
  time_zone: string;
  dark_is_tamper: boolean;
  milestone: MilestoneSource | null;
}

/** The camera in Milestone XProtect, for its analytics events (docs/events.md). */
export interface MilestoneSource {
  source_name: string;
  source_object_id: string | null;
  messages: { tampered: string; offline: string; ok: string };
}

/** A reference as a check used it: its slot, when it was captured, the check it came from. */
export interface ReferenceUsed {
  slot: string;
  captured_at: string;
  source_job: string | null;
}

/** A settings change, an acknowledgement, a reset, or a reference the appliance set aside (GET /cameras/<camera>/history). */
export interface HistoryEntry {
  at: string;
  kind: 'settings' | 'acknowledged' | 'reset' | 'reference_set_aside';
  by: string | null;
  comment?: string | null;
  previous_state?: CameraState;
  /** reference_set_aside: the check, the reference set aside, the older one, and the clip's probability against each. */
  job_id?: string;
  reference?: ReferenceUsed | null;
  probability?: number | null;
  older_reference?: ReferenceUsed | null;
  older_probability?: number | null;
  /** settings: each changed setting by name. */
  [setting: string]: unknown;
}

export interface Reference {
  reference_id: string;
  slot: string;
  captured_at: string;
  source_job: string | null;
  /** uploaded, renewed, learned, capture; null for references of earlier releases. */
  origin?: 'uploaded' | 'renewed' | 'learned' | 'capture' | null;
  width: number;
  height: number;
  created_at: string;
  image: string;
}

export interface CameraCheck {
  job_id: string;
  captured_at: string;
  finish_time: string;
  success: boolean;
  probability: number | null;
  state: CameraState;
}

export interface CameraDetail extends CameraSummary {
  alarm_streak: number;
  settings: CameraSettings;
  armed_now: boolean;
  alarm_held: boolean;
  history: HistoryEntry[];
  references: { slot: string; references: Reference[] }[];
  checks: CameraCheck[];
}

export interface StateChange {
  from: CameraState | null;
  to: CameraState;
  at: string;
  job_id: string | null;
  reason: string | null;
}

export type Causes = Record<'blur' | 'moved' | 'masked' | 'exposure' | 'frozen' | 'black', number>;

/** How far a running job is (the task's `progress`). */
export interface JobProgress {
  frames_done: number;
  frames_total: number | null;
  percent: number | null;
  eta_s: number | null;
}

export interface TaskBase {
  analytic: string;
  job_id: string;
  complete: boolean;
  message: string;
  start_time: string;
  finish_time?: string;
  success?: boolean;
  error?: { code: string; message: string };
  progress?: JobProgress;
}

export interface KamcheckTask extends TaskBase {
  probability?: number;
  causes?: Causes;
  not_judged?: (keyof Causes)[];
  too_dark?: boolean;
  not_counted?: (keyof Causes)[];
  camera?: string;
  captured_at?: string;
  reference?: ReferenceUsed;
  /** A check that alarmed against a reference the appliance renewed, checked again against the slot's older one. */
  second_opinion?: { reference: ReferenceUsed; probability: number; first_probability: number; reference_set_aside: boolean };
}

export interface Sighting {
  sighting_id: string;
  start_frame: number;
  end_frame: number;
  frames: number;
  confidence?: number;
  gender?: string;
  gender_confidence?: number;
  thumbnail?: string;
}

export interface FaceLogTask extends TaskBase {
  frames?: number;
  frames_processed?: number;
  start_frame?: number;
  input_video?: string;
  resolution?: string;
  number_of_sightings?: number;
  results_video?: string;
  results_xml?: string;
  results_image?: string;
  sightings?: Sighting[];
}

/** A named user (GET /users); `cameras` null: all cameras. */
export interface User {
  name: string;
  role: Role;
  cameras: string[] | null;
  created_at: string;
  password_changed_at: string;
}

/** An API key (GET /keys): never its secret, which only its creation answers. */
export interface ApiKey {
  id: string;
  name: string;
  role: Role;
  cameras: string[] | null;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** One change in the audit trail (GET /audit); `detail` may hold `before` and `after`. */
export interface AuditEvent {
  id: number;
  at: string;
  actor: string;
  address: string;
  action: string;
  target: string;
  detail: ({ before?: Record<string, unknown>; after?: Record<string, unknown> } & Record<string, unknown>) | null;
}
