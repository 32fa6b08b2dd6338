// The service's credentials: where they come from (AUTH_CREDENTIALS, else the credentials file
// under DATA_DIR, else a freshly generated one with owner-only permissions; it never starts open)
// and how a presented pair is checked against them. Basic authentication (lib/http/auth.ts) and
// the console's sign-in (lib/sessions/) both check pairs here.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createOnce } from './create-once.js';
import { parseCredentials, type Config, type Credential } from './config.js';

export interface ResolvedCredentials {
  credentials: Credential[];
  /** The file they came from, or null when from the environment. */
  file: string | null;
  generated: boolean;
}

export const GENERATED_USER = 'admin';

export function resolveCredentials(config: Config): ResolvedCredentials {
  if (config.credentials) return { credentials: config.credentials, file: null, generated: false };
  const file = path.join(config.dataDir, 'credentials');
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    return { credentials: parseCredentials(text, file), file, generated: false };
  }
  const password = randomBytes(18).toString('base64url'); // 144 random bits
  const mine = `${GENERATED_USER}:${password}\n`;
  // Nodes sharing DATA_DIR may start together: one of them writes the file, all use it.
  const text = createOnce(file, mine);
  return { credentials: parseCredentials(text, file), file, generated: text === mine };
}

/** Whether `user:password` is one of the configured pairs: compared in constant time, with every pair. */
export function credentialCheck(credentials: Credential[]): (pair: string) => boolean {
  const digests = credentials.map((c) => digest(`${c.user}:${c.password}`));
  return (pair) => {
    const candidate = digest(pair);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, candidate) || ok; // no early exit
    return ok;
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
