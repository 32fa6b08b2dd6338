// An API key is `vaa_<id>_<secret>`: the id (72 random bits) finds its row, the secret (256 bits)
// is checked against the row's SHA-256 of it. Shown once, at creation; the table cannot give it back.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The user name of Basic credentials whose password is an API key, for clients that speak only Basic. */
export const API_KEY_USER = 'apikey';

const KEY = /^vaa_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/;

export function newApiKey(): { id: string; key: string; secretHash: string } {
  const id = randomBytes(9).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `vaa_${id}_${secret}`, secretHash: hashSecret(secret) };
}

/** The key's id and secret, or null for text that is no key. */
export function parseApiKey(text: string): { id: string; secret: string } | null {
  const m = KEY.exec(text);
  return m ? { id: m[1], secret: m[2] } : null;
}

export function secretMatches(secret: string, secretHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(secretHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
