// Absolute, signed links to a job's result files: `<base>/results/<job_id>/<file>?expires=<unix
// seconds>&sig=<hex>`. The signature is an HMAC-SHA256 of the job id and the expiry under a
// secret key kept in DATA_DIR (created on first start, owner-only), so one token opens every
// file of one job (the XML's relative thumbnail names resolve with the same query) until the
// retention period ends. Without a valid token a link needs the Basic header like every endpoint.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createOnce } from '../create-once.js';
import path from 'node:path';

export const RESULTS_PATH = '/results';

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
    return `${base}${RESULTS_PATH}/${jobId}/${encodeURIComponent(file)}?expires=${expires}&sig=${this.sign(jobId, expires)}`;
  }
}
