// A camera's stream address as the API takes it (`source_url`) and as it is ever shown again: the
// password replaced. Only the protocols of cameras and their gateways are accepted: ffmpeg would
// also open `file:`, `concat:` or `pipe:` and read the appliance's own disk.
import { InvalidInputError } from '../errors.js';
import { redactSourceUrl, redactText } from './redact.js';

export const SOURCE_SCHEMES = ['rtsp:', 'rtsps:', 'http:', 'https:'] as const;
export const MAX_SOURCE_URL_LENGTH = 2048;

/** The URL, checked: one of SOURCE_SCHEMES, a host, at most MAX_SOURCE_URL_LENGTH characters. */
export function checkSourceUrl(raw: unknown): string {
  if (typeof raw !== 'string') throw invalid(`"source_url" must be a string (rtsp://, rtsps://, http:// or https://) or null`);
  const text = raw.trim();
  if (text.length > MAX_SOURCE_URL_LENGTH) throw invalid(`"source_url" must be at most ${MAX_SOURCE_URL_LENGTH} characters, got ${text.length}`);
  // Spaces and control characters: never part of a camera's address, and a way to smuggle options.
  if (/[\s\x00-\x1f\x7f]/.test(text)) throw invalid(`"source_url" must not contain spaces or control characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`"source_url" is not a URL: "${redactText(text).slice(0, 200)}"`);
  }
  if (!(SOURCE_SCHEMES as readonly string[]).includes(url.protocol)) {
    throw invalid(`"source_url" must start with rtsp://, rtsps://, http:// or https://, got "${url.protocol}"`);
  }
  if (!url.hostname) throw invalid(`"source_url" must name a host: "${redactSourceUrl(text)}"`);
  return text;
}


const invalid = (message: string) => new InvalidInputError(message);
