import { AnalyticError } from '../errors.js';

/** Media could not be decoded (corrupt, truncated, unsupported codec). Not retryable. */
export class DecodeError extends AnalyticError {
  constructor(message: string) {
    super('decode_failed', message);
  }
}
