// Errors that become HTTP responses. Each has a stable snake_case code; the one error handler
// (app.ts) turns them into the SPEC's error envelope.

import { formatBytes } from '../bytes.js';

export class ApiError extends Error {
  /** Safe to show: the message reaches the client. */
  readonly expose = true;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The SPEC's error envelope. The message is also at the top level, where clients of the original
 * service read it.
 */
export function errorBody(code: string, message: string): { status: 'error'; message: string; error: { code: string; message: string } } {
  return { status: 'error', message, error: { code, message } };
}

export const missingFile = (field: string) =>
  new ApiError(400, 'missing_file', `the multipart file field "${field}" is required`);

export const invalidParameter = (message: string) => new ApiError(400, 'invalid_parameter', message);

export const unauthorized = (realm: string, message = 'valid Basic credentials are required') =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` });

export const notFound = (message = 'no such resource') => new ApiError(404, 'not_found', message);

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, 'payload_too_large', `the upload is larger than the limit of ${formatBytes(limitBytes)}`);

export const unsupportedMedia = (message: string) => new ApiError(415, 'unsupported_media', message);

export const methodNotAllowed = (method: string, allowed: string[]) =>
  new ApiError(405, 'method_not_allowed', `${method} is not allowed here; use ${allowed.join(' or ')}`, { Allow: allowed.join(', ') });

/** The disk of DATA_DIR is nearly full: `free` bytes left, `floor` must stay free (MIN_FREE_DISK_MB). */
export const insufficientStorage = (free: number, floor: number, incoming = 0) =>
  new ApiError(
    507,
    'insufficient_storage',
    incoming > 0 && free >= floor
      ? `not enough free disk space for an upload of ${formatBytes(incoming)}: ${formatBytes(free)} free, of which ${formatBytes(floor)} must stay free; retry when old results have been removed`
      : `the appliance's disk is nearly full (${formatBytes(free)} free, ${formatBytes(floor)} must stay free); uploads are refused until space is freed`,
  );

export const busy = (retryAfterSeconds: number) =>
  new ApiError(503, 'busy', 'the job queue is full; retry later', { 'Retry-After': String(retryAfterSeconds) });
