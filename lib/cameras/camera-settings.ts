// What an operator sets per camera to fit the check to its scene (PUT /cameras/<camera>): the
// sensitivity, the alarm delays, the areas to ignore, when the camera is armed, and whether a
// picture too dark to judge is tampering. A camera keeps only what differs from the defaults
// (one JSON column), so a default that changes reaches every camera that never set it.
import { DEFAULT_SENSITIVITY, type Sensitivity } from './sensitivity.js';

/** A point of an ignored area: x and y as fractions of the picture's width and height. */
export type AreaPoint = [number, number];
/** An ignored area: a polygon of at least 3 points. */
export type IgnoreArea = AreaPoint[];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Armed from `from` to `to` (HH:MM, local to the camera's time zone) on each of `days`; `to` before `from` runs past midnight into the next day. */
export interface ArmedRange {
  days: Weekday[];
  from: string;
  to: string;
}

/** The camera in Milestone XProtect, for its analytics events (lib/milestone/). */
export interface MilestoneSource {
  /** The camera's name or address in XProtect. */
  sourceName: string;
  /** Its object id (a GUID): the event's source is then named by FQID too. */
  sourceObjectId: string | null;
  /** The event's message per state; null: the default (MILESTONE_MESSAGES). */
  messages: { tampered: string | null; offline: string | null; ok: string | null };
}

export interface CameraSettings {
  sensitivity: Sensitivity;
  /** Null: the appliance's ALARM_AFTER. */
  alarmAfter: number | null;
  /** Null: the appliance's CLEAR_AFTER. */
  clearAfter: number | null;
  ignoreAreas: IgnoreArea[];
  /** Empty: always armed. */
  armed: ArmedRange[];
  /** An IANA name; null: the appliance's own. */
  timeZone: string | null;
  darkIsTamper: boolean;
  /** Null: the camera's events are not sent to XProtect. */
  milestone: MilestoneSource | null;
}

export type SettingsChange = Partial<CameraSettings>;

export const DEFAULT_SETTINGS: CameraSettings = Object.freeze({
  sensitivity: DEFAULT_SENSITIVITY,
  alarmAfter: null,
  clearAfter: null,
  ignoreAreas: [],
  armed: [],
  timeZone: null,
  darkIsTamper: true,
  milestone: null,
});

/** Each setting's name in the API, in the order a camera shows them. */
export const SETTING_NAMES: Record<keyof CameraSettings, string> = {
  sensitivity: 'sensitivity',
  alarmAfter: 'alarm_after',
  clearAfter: 'clear_after',
  ignoreAreas: 'ignore_areas',
  armed: 'armed',
  timeZone: 'time_zone',
  darkIsTamper: 'dark_is_tamper',
  milestone: 'milestone',
};

const KEYS = Object.keys(SETTING_NAMES) as (keyof CameraSettings)[];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The settings a camera's column holds (null or `{}` for none set), over the defaults. */
export function settingsFromColumn(json: string | null | undefined): CameraSettings {
  if (!json) return { ...DEFAULT_SETTINGS };
  const stored = JSON.parse(json) as Partial<CameraSettings>;
  const out: CameraSettings = { ...DEFAULT_SETTINGS };
  for (const k of KEYS) if (k in stored) (out as unknown as Record<string, unknown>)[k] = stored[k];
  return out;
}

/** What the column keeps: the settings that differ from the defaults; null when none does. */
export function settingsColumn(s: CameraSettings): string | null {
  const kept: Record<string, unknown> = {};
  for (const k of KEYS) if (!same(s[k], DEFAULT_SETTINGS[k])) kept[k] = s[k];
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : null;
}

/** `change` applied over `before`: a field not in it stays as it was. */
export function applySettings(before: CameraSettings, change: SettingsChange): CameraSettings {
  const out = { ...before };
  for (const k of KEYS) if (change[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = change[k];
  return out;
}

/** The settings that differ, by API name, with their values before and after (null for a default). */
export function settingsDiff(before: CameraSettings, after: CameraSettings): Record<string, { from: unknown; to: unknown }> {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  for (const k of KEYS) if (!same(before[k], after[k])) diff[SETTING_NAMES[k]] = { from: apiValue(k, before[k]), to: apiValue(k, after[k]) };
  return diff;
}

/** A setting's value as the API writes it (the milestone setting's fields by their API names). */
function apiValue<K extends keyof CameraSettings>(k: K, v: CameraSettings[K]): unknown {
  return k === 'milestone' && v ? presentMilestone(v as MilestoneSource) : v;
}

/** The appliance-wide values that settings left at null stand for. */
export interface SettingDefaults {
  alarmAfter: number;
  clearAfter: number;
  timeZone: string;
}

/** The appliance's own time zone: TZ, else the system's. */
export function applianceTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Every setting with what applies, as GET /cameras/<camera> shows them. */
export function presentSettings(s: CameraSettings, d: SettingDefaults): Record<string, unknown> {
  return {
    sensitivity: s.sensitivity,
    alarm_after: s.alarmAfter ?? d.alarmAfter,
    clear_after: s.clearAfter ?? d.clearAfter,
    ignore_areas: s.ignoreAreas,
    armed: s.armed,
    time_zone: s.timeZone ?? d.timeZone,
    dark_is_tamper: s.darkIsTamper,
    milestone: s.milestone ? presentMilestone(s.milestone) : null,
  };
}

/** The analytics events' messages XProtect must define, when a camera names none (docs/events.md). */
export const MILESTONE_MESSAGES = Object.freeze({ tampered: 'Camera tampered', offline: 'Camera offline', ok: 'Camera OK' });

/** A camera's `milestone` setting as the API shows it: every message, its own or the default. */
export function presentMilestone(m: MilestoneSource): Record<string, unknown> {
  return {
    source_name: m.sourceName,
    source_object_id: m.sourceObjectId,
    messages: {
      tampered: m.messages.tampered ?? MILESTONE_MESSAGES.tampered,
      offline: m.messages.offline ?? MILESTONE_MESSAGES.offline,
      ok: m.messages.ok ?? MILESTONE_MESSAGES.ok,
    },
  };
}
