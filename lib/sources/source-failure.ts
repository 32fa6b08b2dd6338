// Why a camera's stream gave no clip. No OpenCV or processes here: the service reads a failed
// check's reason (lib/cameras/check-outcome.ts) from its error code.
import { AnalyticError } from '../errors.js';

/** Why a stream gave no clip: the camera resource's `offline_reason`, and the failed task's code after `source_`. */
export type SourceFailureReason =
  | 'connection_refused'
  | 'timeout'
  | 'authentication_failed'
  | 'not_found'
  | 'unreachable'
  | 'no_video_stream'
  | 'stream_error';

export const SOURCE_FAILURE_PREFIX = 'source_';

/** The stream could not be read: the check fails with `source_<reason>`, and counts towards offline. */
export class SourceFailure extends AnalyticError {
  constructor(
    readonly reason: SourceFailureReason,
    message: string,
  ) {
    super(`${SOURCE_FAILURE_PREFIX}${reason}`, message);
  }
}

/** The reason of a failed check's error code, or null when the check failed for another cause. */
export function sourceFailureReason(code: string | undefined): string | null {
  return code?.startsWith(SOURCE_FAILURE_PREFIX) ? code.slice(SOURCE_FAILURE_PREFIX.length) : null;
}

