// The settings fields of PUT /cameras/<camera>, from JSON or from a form (strings, and lists as
// JSON text). Each field is read on its own; a bad value is refused with a 400 that names it, so
// nothing of the request is applied. `null` (or an empty form field) puts a setting back to its
// default.
import { invalidParameter } from '../../http/errors.js';
import { isTimeZone } from '../armed.js';
import { DEFAULT_SETTINGS, WEEKDAYS, type ArmedRange, type IgnoreArea, type MilestoneSource, type SettingsChange, type Weekday } from '../camera-settings.js';
import { ignoredShare } from '../ignore-areas.js';
import { SENSITIVITIES, type Sensitivity } from '../sensitivity.js';

export const SETTING_FIELDS = ['sensitivity', 'alarm_after', 'clear_after', 'ignore_areas', 'armed', 'time_zone', 'dark_is_tamper', 'milestone'];

/** Checks of a streak, as ALARM_AFTER and CLEAR_AFTER allow. */
export const MAX_STREAK = 1000;
export const MAX_IGNORE_AREAS = 16;
export const MAX_AREA_POINTS = 64;
/** The areas must leave this share of the picture to check. */
export const MIN_CHECKED_SHARE = 0.2;
export const MAX_ARMED_RANGES = 32;

const shown = (raw: unknown) => JSON.stringify(raw)?.slice(0, 60);
const isDefault = (raw: unknown) => raw === null || raw === '';

export function readSettingsFields(fields: Record<string, unknown>): SettingsChange {
  const out: SettingsChange = {};
  if ('sensitivity' in fields) out.sensitivity = isDefault(fields.sensitivity) ? DEFAULT_SETTINGS.sensitivity : readSensitivity(fields.sensitivity);
  if ('alarm_after' in fields) out.alarmAfter = isDefault(fields.alarm_after) ? null : readStreak('alarm_after', fields.alarm_after);
  if ('clear_after' in fields) out.clearAfter = isDefault(fields.clear_after) ? null : readStreak('clear_after', fields.clear_after);
  if ('ignore_areas' in fields) out.ignoreAreas = isDefault(fields.ignore_areas) ? [] : readIgnoreAreas(fields.ignore_areas);
  if ('armed' in fields) out.armed = isDefault(fields.armed) ? [] : readArmed(fields.armed);
  if ('time_zone' in fields) out.timeZone = isDefault(fields.time_zone) ? null : readTimeZone(fields.time_zone);
  if ('dark_is_tamper' in fields) out.darkIsTamper = isDefault(fields.dark_is_tamper) ? DEFAULT_SETTINGS.darkIsTamper : readFlag('dark_is_tamper', fields.dark_is_tamper);
  if ('milestone' in fields) out.milestone = isDefault(fields.milestone) ? null : readMilestone(fields.milestone);
  return out;
}

function readSensitivity(raw: unknown): Sensitivity {
  if (typeof raw === 'string' && (SENSITIVITIES as readonly string[]).includes(raw.trim().toLowerCase())) return raw.trim().toLowerCase() as Sensitivity;
  throw invalidParameter(`"sensitivity" must be one of ${SENSITIVITIES.map((s) => `"${s}"`).join(', ')}, got ${shown(raw)}`);
}

function readStreak(name: string, raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_STREAK) throw invalidParameter(`"${name}" must be a whole number of checks from 1 to ${MAX_STREAK}, got ${shown(raw)}`);
  return n;
}

export function readFlag(name: string, raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'on', 'yes'].includes(v)) return true;
    if (['false', '0', 'off', 'no'].includes(v)) return false;
  }
  throw invalidParameter(`"${name}" must be true or false, got ${shown(raw)}`);
}

/** A value sent as JSON, or as JSON text in a form field. */
function fromForm(name: string, raw: unknown, what: string): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw invalidParameter(`"${name}" must be ${what}; the form field is not JSON: ${shown(raw)}`);
  }
}

/** A list sent as JSON, or as JSON text in a form field. */
function readList(name: string, raw: unknown, what: string): unknown[] {
  const value = fromForm(name, raw, what);
  if (!Array.isArray(value)) throw invalidParameter(`"${name}" must be ${what}, got ${shown(raw)}`);
  return value;
}

const AREAS = 'a list of polygons, each a list of at least 3 [x, y] points from 0 to 1, e.g. [[[0, 0], [0.3, 0], [0.3, 0.4]]]';

function readIgnoreAreas(raw: unknown): IgnoreArea[] {
  const list = readList('ignore_areas', raw, AREAS);
  if (list.length > MAX_IGNORE_AREAS) throw invalidParameter(`"ignore_areas" takes at most ${MAX_IGNORE_AREAS} polygons, got ${list.length}`);
  const areas = list.map((polygon, i) => {
    const where = `"ignore_areas" polygon ${i + 1}`;
    if (!Array.isArray(polygon) || polygon.length < 3 || polygon.length > MAX_AREA_POINTS) {
      throw invalidParameter(`${where} must be a list of 3 to ${MAX_AREA_POINTS} [x, y] points, got ${shown(polygon)}`);
    }
    return polygon.map((point, j) => {
      const ok = Array.isArray(point) && point.length === 2 && point.every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1);
      if (!ok) throw invalidParameter(`${where}, point ${j + 1} must be [x, y] with x and y from 0 to 1 (fractions of the picture), got ${shown(point)}`);
      // four decimals: a tenth of a pixel at 4K, and a column that stays small
      return [Math.round(point[0] * 1e4) / 1e4, Math.round(point[1] * 1e4) / 1e4] as [number, number];
    });
  });
  const share = ignoredShare(areas);
  if (share > 1 - MIN_CHECKED_SHARE) {
    throw invalidParameter(`"ignore_areas" cover ${Math.round(share * 100)}% of the picture; at least ${MIN_CHECKED_SHARE * 100}% must be left to check`);
  }
  return areas;
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;

function readArmed(raw: unknown): ArmedRange[] {
  const list = readList('armed', raw, 'a list of weekly ranges such as [{"days": ["mon", "tue"], "from": "08:00", "to": "18:00"}]');
  if (list.length > MAX_ARMED_RANGES) throw invalidParameter(`"armed" takes at most ${MAX_ARMED_RANGES} ranges, got ${list.length}`);
  return list.map((range, i) => {
    const where = `"armed" range ${i + 1}`;
    if (typeof range !== 'object' || range === null || Array.isArray(range)) throw invalidParameter(`${where} must be an object with "days", "from" and "to", got ${shown(range)}`);
    const r = range as Record<string, unknown>;
    unknownKeys(where, r, ['days', 'from', 'to']);
    const days = r.days;
    if (!Array.isArray(days) || days.length === 0 || !days.every((d) => typeof d === 'string' && (WEEKDAYS as readonly string[]).includes(d.toLowerCase()))) {
      throw invalidParameter(`${where}: "days" must be a list of ${WEEKDAYS.map((d) => `"${d}"`).join(', ')}, got ${shown(days)}`);
    }
    for (const key of ['from', 'to'] as const) {
      if (typeof r[key] !== 'string' || !HHMM.test(r[key] as string)) throw invalidParameter(`${where}: "${key}" must be a time of day as "HH:MM" (00:00 to 24:00), got ${shown(r[key])}`);
    }
    const ordered = WEEKDAYS.filter((d) => (days as string[]).some((x) => x.toLowerCase() === d)) as Weekday[];
    return { days: ordered, from: r.from as string, to: r.to as string };
  });
}

function readTimeZone(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 64 || !isTimeZone(raw.trim())) throw invalidParameter(`"time_zone" must be an IANA time zone such as "Europe/Berlin", got ${shown(raw)}`);
  return raw.trim();
}

/** XProtect's limit is not published; names and messages longer than this are surely mistakes. */
export const MAX_MILESTONE_TEXT = 256;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MILESTONE = '{"source_name": "<the camera\'s name or address in XProtect>", "source_object_id": "<its GUID, optional>", "messages": {"tampered": "...", "offline": "...", "ok": "..."}}';

function readMilestone(raw: unknown): MilestoneSource {
  const value = fromForm('milestone', raw, `an object such as ${MILESTONE}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParameter(`"milestone" must be an object such as ${MILESTONE}, got ${shown(raw)}`);
  const m = value as Record<string, unknown>;
  unknownKeys('"milestone"', m, ['source_name', 'source_object_id', 'messages']);
  const sourceName = milestoneText('"milestone" "source_name"', m.source_name);
  if (sourceName === null) throw invalidParameter(`"milestone" needs "source_name": the camera's name or address in XProtect`);
  let sourceObjectId: string | null = null;
  if (m.source_object_id !== undefined && m.source_object_id !== null && m.source_object_id !== '') {
    if (typeof m.source_object_id !== 'string' || !GUID.test(m.source_object_id.trim())) {
      throw invalidParameter(`"milestone" "source_object_id" must be the camera's id in XProtect, a GUID such as "1f3bd6a1-4b8e-4bd0-9f56-5d1c6d2b1a10", got ${shown(m.source_object_id)}`);
    }
    sourceObjectId = m.source_object_id.trim().toLowerCase();
  }
  const messages: MilestoneSource['messages'] = { tampered: null, offline: null, ok: null };
  if (m.messages !== undefined && m.messages !== null) {
    if (typeof m.messages !== 'object' || Array.isArray(m.messages)) throw invalidParameter(`"milestone" "messages" must be an object with "tampered", "offline" and "ok", got ${shown(m.messages)}`);
    const given = m.messages as Record<string, unknown>;
    unknownKeys('"milestone" "messages"', given, ['tampered', 'offline', 'ok']);
    for (const state of ['tampered', 'offline', 'ok'] as const) messages[state] = milestoneText(`"milestone" "messages" "${state}"`, given[state]);
  }
  return { sourceName, sourceObjectId, messages };
}

/** A text of the milestone setting: null when absent or empty. */
function milestoneText(where: string, raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.trim().length > MAX_MILESTONE_TEXT || /[\u0000-\u001f]/.test(raw)) {
    throw invalidParameter(`${where} must be text of at most ${MAX_MILESTONE_TEXT} characters on one line, got ${shown(raw)}`);
  }
  return raw.trim() === '' ? null : raw.trim();
}

function unknownKeys(where: string, o: Record<string, unknown>, known: string[]): void {
  const extra = Object.keys(o).filter((k) => !known.includes(k));
  if (extra.length > 0) throw invalidParameter(`${where} has unknown field(s) ${extra.map((k) => `"${k.slice(0, 20)}"`).join(', ')}: it takes ${known.map((k) => `"${k}"`).join(', ')}`);
}
