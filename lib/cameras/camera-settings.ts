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
  for (const k of KEYS) if (!same(before[k], after[k])) diff[SETTING_NAMES[k]] = { from: before[k], to: after[k] };
  return diff;
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
  };
}
