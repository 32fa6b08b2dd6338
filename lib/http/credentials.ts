// Where the service's Basic credentials come from: AUTH_CREDENTIALS, else the credentials file
// under DATA_DIR, else a freshly generated one (owner-only permissions). It never starts open.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createOnce } from '../create-once.js';
import { parseCredentials, type Config, type Credential } from '../config.js';

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
