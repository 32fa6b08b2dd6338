// Absolute, signed links to a job's result files: `<base>/results/<job_id>/<expires>.<sig>/<file>`,
// where `expires` is in unix seconds and `sig` is the hex HMAC-SHA256 of the job id and the expiry
// under a secret key kept in DATA_DIR (created on first start, owner-only). The token sits in the
// path, not in a query string, because clients of the original service save each download under
// the last path segment of its URL: that segment must be the file name. One token opens every file
// of one job until the retention period ends, so the XML's relative thumbnail names resolve to
// signed links as well. Links of the earlier form, `<base>/results/<job_id>/<file>?expires=...&sig=...`,
// are still honoured until they expire. Without a valid token a link needs the Basic header like
// every endpoint.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createOnce } from '../create-once.js';
import path from 'node:path';

export const RESULTS_PATH = '/results';

/** The token path segment of a signed link: `<expires>.<sig>`. */
const TOKEN = /^(\d{1,12})\.([0-9a-f]{64})$/;

export interface LinkToken {
  expires: string;
  sig: string;
}

/** The expiry and signature of a `<expires>.<sig>` path segment; null when it is not one. */
export function parseLinkToken(segment: string): LinkToken | null {
  const m = TOKEN.exec(segment);
  return m ? { expires: m[1], sig: m[2] } : null;
}

export class ResultLinks {
  constructor(private readonly key: Buffer) {}

  /** The key in `<dataDir>/link-secret`, generated on first use. */
  static fromDataDir(dataDir: string): ResultLinks {
    // Every node sharing DATA_DIR signs and verifies with the same key.
    const text = createOnce(path.join(dataDir, 'link-secret'), randomBytes(32).toString('hex') + '\n');
    return new ResultLinks(Buffer.from(text.trim(), 'hex'));
  }

  sign(jobId: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${jobId}\n${expires}`).digest('hex');
  }

  /** true when `sig` is this service's signature of the job and expiry (expiry not checked). */
  verify(jobId: string, expires: string | undefined, sig: string | undefined): boolean {
    if (!expires || !sig || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return false;
    const expected = Buffer.from(this.sign(jobId, Number(expires)), 'hex');
    return timingSafeEqual(expected, Buffer.from(sig, 'hex'));
  }

  url(base: string, jobId: string, file: string, expiresMs: number): string {
    const expires = Math.floor(expiresMs / 1000);
    return `${base}${RESULTS_PATH}/${jobId}/${expires}.${this.sign(jobId, expires)}/${encodeURIComponent(file)}`;
  }
}
