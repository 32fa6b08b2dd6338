// The fields of the users' and keys' requests, checked one by one: a bad value is a 400 that
// names the field, and nothing changes.
import { checkCameraId } from '../../cameras/http/fields.js';
import { invalidParameter } from '../../http/errors.js';
import { API_KEY_USER } from '../api-key-format.js';
import { isRole, ROLES, type Role } from '../roles.js';

const USER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;
export const MIN_PASSWORD = 10;
const MAX_PASSWORD = 1024;

export function unknownFields(fields: Record<string, unknown>, known: string[]): void {
  const unknown = Object.keys(fields).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw invalidParameter(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(', ')}; known: ${known.join(', ')}`);
}

export function userName(value: unknown): string {
  if (typeof value !== 'string' || !USER_NAME.test(value)) throw invalidParameter('"name" must be 1-64 characters of A-Z a-z 0-9 . _ @ -');
  if (value === API_KEY_USER) throw invalidParameter(`"name" cannot be "${API_KEY_USER}": Basic credentials with that user name carry an API key`);
  return value;
}

export function password(value: unknown): string {
  if (typeof value !== 'string' || value.length < MIN_PASSWORD || value.length > MAX_PASSWORD) {
    throw invalidParameter(`"password" must be text of ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
  }
  return value;
}

export function role(value: unknown): Role {
  if (!isRole(value)) throw invalidParameter(`"role" must be one of ${ROLES.map((r) => `"${r}"`).join(', ')}`);
  return value;
}

/** A list of camera ids, or null for all cameras; a form sends them comma-separated. */
export function cameras(value: unknown): string[] | null {
  if (value === null || value === '' || value === undefined) return null;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : value;
  if (!Array.isArray(list) || list.length === 0 || list.length > 10_000 || list.some((c) => typeof c !== 'string')) {
    throw invalidParameter('"cameras" must be a non-empty list of camera ids, or null for all cameras');
  }
  try {
    return [...new Set(list.map((c: string) => checkCameraId(c)))].sort();
  } catch (err) {
    throw invalidParameter(`"cameras": ${(err as Error).message}`);
  }
}

export function keyName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 100 || /[\u0000-\u001f]/.test(value)) {
    throw invalidParameter('"name" must be text of 1 to 100 characters');
  }
  return value.trim();
}

/** An ISO 8601 time with its zone (or an HTTP-date), or null for none. */
export function expiresAt(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const at = typeof value === 'string' && /\d/.test(value) && (/(Z|[+-]\d\d:?\d\d|GMT)$/.test(value.trim())) ? Date.parse(value) : NaN;
  if (!Number.isFinite(at)) throw invalidParameter('"expires_at" must be a time with its zone, as YYYY-MM-DDThh:mm:ssZ, or null');
  return at;
}
