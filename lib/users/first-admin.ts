// The users the appliance starts with. AUTH_CREDENTIALS declares admins whose passwords it sets
// on every start (the environment wins over a change through the API). Without it, a database
// with no users takes those of DATA_DIR/credentials: the file of a release before users, or one
// generated now with a random password (owner-only), the way a newcomer learns it. That file is
// the only plain-text password kept, and only until its user's password changes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { parseCredentials, type Credential } from '../config.js';
import { createOnce } from '../create-once.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { UserStore } from './user-store.js';

export const GENERATED_USER = 'admin';

export interface FirstCredentials {
  /** DATA_DIR/credentials while it holds a password still in use, else null. */
  file: string | null;
  /** The file was written by this start. */
  generated: boolean;
  /** The passwords came from AUTH_CREDENTIALS. */
  fromEnvironment: boolean;
}

export const credentialsFile = (dataDir: string) => path.join(dataDir, 'credentials');

export async function provisionUsers(store: UserStore, config: { credentials: Credential[] | null; dataDir: string }, logger: Logger, now: () => number): Promise<FirstCredentials> {
  const file = credentialsFile(config.dataDir);
  if (config.credentials) {
    for (const c of config.credentials) await declare(store, c, logger, now);
    return { file: null, generated: false, fromEnvironment: true };
  }
  if ((await store.count()) > 0) return { file: fs.existsSync(file) ? file : null, generated: false, fromEnvironment: false };
  let generated = false;
  let text: string;
  if (fs.existsSync(file)) {
    text = fs.readFileSync(file, 'utf8');
  } else {
    const mine = `${GENERATED_USER}:${randomBytes(18).toString('base64url')}\n`; // 144 random bits
    // Nodes sharing DATA_DIR may start together: one of them writes the file, all use it.
    text = createOnce(file, mine);
    generated = text === mine;
  }
  const at = now();
  for (const c of parseCredentials(text, file)) {
    const passwordHash = await hashPassword(c.password);
    const added = await store.transaction((tx) => tx.insert({ name: c.user, passwordHash, role: 'admin', cameras: null, createdAt: at, passwordChangedAt: at }));
    if (added) logger.info({ user: c.user, file }, generated ? 'first admin created with a generated password' : 'admin taken over from the credentials file');
  }
  return { file, generated, fromEnvironment: false };
}

/** An AUTH_CREDENTIALS pair: added as an admin, or its password set when it differs. */
async function declare(store: UserStore, c: Credential, logger: Logger, now: () => number): Promise<void> {
  const existing = await store.get(c.user);
  if (existing && (await verifyPassword(c.password, existing.passwordHash))) return;
  const passwordHash = await hashPassword(c.password);
  const at = now();
  await store.transaction(async (tx) => {
    const current = await tx.get(c.user);
    if (current) await tx.update({ ...current, passwordHash, passwordChangedAt: at });
    else await tx.insert({ name: c.user, passwordHash, role: 'admin', cameras: null, createdAt: at, passwordChangedAt: at });
  });
  logger.info({ user: c.user }, existing ? 'password set from AUTH_CREDENTIALS' : 'admin added from AUTH_CREDENTIALS');
}

/** Drops `user`'s line from the credentials file once its password changed or it was removed; the file goes when empty. */
export function forgetFilePassword(dataDir: string, user: string, logger: Logger): void {
  const file = credentialsFile(dataDir);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return;
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const kept = lines.filter((l) => l.slice(0, l.indexOf(':')) !== user);
  if (kept.length === lines.length) return;
  if (kept.length === 0) fs.rmSync(file, { force: true });
  else fs.writeFileSync(file, `${kept.join('\n')}\n`, { mode: 0o600 });
  logger.info({ user, file }, 'the credentials file no longer holds this user\'s password');
}
