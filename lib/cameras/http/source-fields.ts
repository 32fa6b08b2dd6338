// The fields of PUT /cameras/<camera>: `source_url`, `check_interval_s`, `enabled`, from JSON or
// from a form (strings). An absent field keeps what the camera has (a password need not be sent
// again to pause checks); `source_url: null` (or an empty form field) removes the source.
import { invalidParameter } from '../../http/errors.js';
import { checkSourceUrl } from '../../sources/source-url.js';

import type { SourceChange } from '../source-settings.js';

export const MIN_CHECK_INTERVAL_S = 10;
export const MAX_CHECK_INTERVAL_S = 7 * 24 * 3600;

const KNOWN = ['source_url', 'check_interval_s', 'enabled'];

export function readSourceFields(fields: Record<string, unknown>): SourceChange {
  const unknown = Object.keys(fields).filter((k) => !KNOWN.includes(k));
  if (unknown.length > 0) throw invalidParameter(`unknown field(s) ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(', ')}: a camera takes ${KNOWN.map((k) => `"${k}"`).join(', ')}`);
  const out: SourceChange = {};
  if ('source_url' in fields) {
    const raw = fields.source_url;
    out.url = raw === null || raw === '' ? null : checkSourceUrl(raw);
  }
  if ('check_interval_s' in fields) out.intervalS = readInterval(fields.check_interval_s);
  if ('enabled' in fields) out.enabled = readBoolean(fields.enabled);
  return out;
}

function readInterval(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < MIN_CHECK_INTERVAL_S || n > MAX_CHECK_INTERVAL_S) {
    throw invalidParameter(`"check_interval_s" must be a whole number of seconds from ${MIN_CHECK_INTERVAL_S} to ${MAX_CHECK_INTERVAL_S}, got ${JSON.stringify(raw)?.slice(0, 40)}`);
  }
  return n;
}

function readBoolean(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'on', 'yes'].includes(v)) return true;
    if (['false', '0', 'off', 'no'].includes(v)) return false;
  }
  throw invalidParameter(`"enabled" must be true or false, got ${JSON.stringify(raw)?.slice(0, 40)}`);
}
