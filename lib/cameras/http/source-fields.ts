// The fields of PUT /cameras/<camera>: the stream source's `source_url`, `check_interval_s` and
// `enabled`, and the camera's settings (settings-fields.ts), from JSON or from a form (strings). An
// absent field keeps what the camera has (a password need not be sent again to pause checks);
// `source_url: null` (or an empty form field) removes the source.
import { invalidParameter } from '../../http/errors.js';
import { checkSourceUrl } from '../../sources/source-url.js';
import type { SettingsChange } from '../camera-settings.js';
import type { SourceChange } from '../source-settings.js';
import { readFlag, readSettingsFields, SETTING_FIELDS } from './settings-fields.js';

export const MIN_CHECK_INTERVAL_S = 10;
export const MAX_CHECK_INTERVAL_S = 7 * 24 * 3600;

const SOURCE_FIELDS = ['source_url', 'check_interval_s', 'enabled'];
const KNOWN = [...SOURCE_FIELDS, ...SETTING_FIELDS];

export function readCameraFields(fields: Record<string, unknown>): { source: SourceChange; settings: SettingsChange } {
  const unknown = Object.keys(fields).filter((k) => !KNOWN.includes(k));
  if (unknown.length > 0) throw invalidParameter(`unknown field(s) ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(', ')}: a camera takes ${KNOWN.map((k) => `"${k}"`).join(', ')}`);
  return { source: readSourceFields(fields), settings: readSettingsFields(fields) };
}

function readSourceFields(fields: Record<string, unknown>): SourceChange {
  const out: SourceChange = {};
  if ('source_url' in fields) {
    const raw = fields.source_url;
    out.url = raw === null || raw === '' ? null : checkSourceUrl(raw);
  }
  if ('check_interval_s' in fields) out.intervalS = readInterval(fields.check_interval_s);
  if ('enabled' in fields) out.enabled = readFlag('enabled', fields.enabled);
  return out;
}

function readInterval(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < MIN_CHECK_INTERVAL_S || n > MAX_CHECK_INTERVAL_S) {
    throw invalidParameter(`"check_interval_s" must be a whole number of seconds from ${MIN_CHECK_INTERVAL_S} to ${MAX_CHECK_INTERVAL_S}, got ${JSON.stringify(raw)?.slice(0, 40)}`);
  }
  return n;
}
