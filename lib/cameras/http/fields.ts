// The camera fields of a request: `camera` (the VMS's id of it) and `captured_at`.
import { invalidParameter } from '../../http/errors.js';
import { singleField, type Upload } from '../../http/upload.js';
import { parseCapturedAt } from '../time-of-day.js';

const CAMERA_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A camera id as the API takes it; `.` and `..` alone are refused: clients' URL handling would eat them. */
export function checkCameraId(id: string): string {
  if (!CAMERA_ID.test(id) || /^\.+$/.test(id)) {
    throw invalidParameter(`"camera" must be 1-128 characters of A-Z a-z 0-9 . _ : - (and not only dots), got "${id.slice(0, 140)}"`);
  }
  return id;
}

/** The `camera` form field, or null when absent or empty. */
export function readCamera(upload: Upload): string | null {
  const raw = singleField(upload, 'camera')?.trim();
  return raw ? checkCameraId(raw) : null;
}

/** The `captured_at` form field in ms; `fallback` (when the upload arrived) when absent or empty. */
export function readCapturedAt(upload: Upload, fallback: number): number {
  const raw = singleField(upload, 'captured_at')?.trim();
  if (!raw) return fallback;
  const ms = parseCapturedAt(raw);
  if (ms === null) {
    throw invalidParameter(`"captured_at" must be an ISO 8601 date and time (YYYY-MM-DDThh:mm:ss, optionally with Z or an offset such as +01:00) or an HTTP-date, got "${raw.slice(0, 80)}"`);
  }
  return ms;
}
