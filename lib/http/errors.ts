// Errors of a request, answered at once: each has its status, a stable snake_case code and a
// message for the client; the one error handler (app.ts) turns them into the SPEC's envelope.
import { formatBytes } from '../bytes.js';
import { InvalidInputError, ServiceError } from '../errors.js';

export class ApiError extends ServiceError {
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(code, message, { status, expose: true, headers });
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

/** The same error a module raises for a value it cannot take (lib/errors.ts). */
export const invalidParameter = (message: string) => new InvalidInputError(message);

export const unauthorized = (realm: string, message = 'valid Basic credentials are required') =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` });

export const notFound = (message = 'no such resource') => new ApiError(404, 'not_found', message);

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, 'payload_too_large', `the upload is larger than the limit of ${formatBytes(limitBytes)}`);

export const unsupportedMedia = (message: string) => new ApiError(415, 'unsupported_media', message);

export const methodNotAllowed = (method: string, allowed: string[]) =>
  new ApiError(405, 'method_not_allowed', `${method} is not allowed here; use ${allowed.join(' or ')}`, { Allow: allowed.join(', ') });

