// The `callback_url` form field of an upload: where that job's events go besides WEBHOOK_URL.
// Checked at upload (400 `invalid_parameter`, no job): an absolute http(s) URL without
// credentials, at most 2048 characters, and on WEBHOOK_ALLOWED_HOSTS when the operator set it,
// so that clients cannot make the service POST into networks it should not reach.
import type { Config } from '../../config.js';
import { invalidParameter } from '../../http/errors.js';
import { singleField, type Upload } from '../../http/upload.js';

export const CALLBACK_URL_FIELD = 'callback_url';
/** The length browsers and proxies reliably carry. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/** The normalised URL, or null when the field is absent or empty. */
export function readCallbackUrl(fields: Pick<Upload, 'fields'>, config: Pick<Config, 'webhookAllowedHosts'>): string | null {
  const raw = singleField(fields as Upload, CALLBACK_URL_FIELD)?.trim();
  if (!raw) return null;
  const field = `"${CALLBACK_URL_FIELD}"`;
  if (raw.length > MAX_CALLBACK_URL_LENGTH) throw invalidParameter(`${field} is longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParameter(`${field} must be an absolute http:// or https:// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidParameter(`${field} must be an http:// or https:// URL, not ${url.protocol}`);
  }
  if (url.username || url.password) throw invalidParameter(`${field} must not carry credentials (user:password@)`);
  if (!url.hostname) throw invalidParameter(`${field} has no host`);
  if (config.webhookAllowedHosts && !hostAllowed(url, config.webhookAllowedHosts)) {
    throw invalidParameter(`${field} names host ${url.host}, which WEBHOOK_ALLOWED_HOSTS does not allow`);
  }
  return url.toString();
}

/**
 * `host` allows that host on any port, `host:port` on that port only, `*.domain` every host
 * under the domain (not the domain itself). Entries are lower case, as URL host names are.
 */
export function hostAllowed(url: URL, allowed: string[]): boolean {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return allowed.some((entry) => {
    const m = /^(.*?)(?::(\d+))?$/.exec(entry)!;
    const [, host, entryPort] = m;
    if (entryPort !== undefined && entryPort !== port) return false;
    if (host.startsWith('*.')) return url.hostname.endsWith(host.slice(1));
    return url.hostname === host;
  });
}
