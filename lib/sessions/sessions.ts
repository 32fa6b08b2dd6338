// Signed-in browsers of the operator console: a session is opened with the appliance's own
// credentials (the Basic pairs) and then stands in for them, from a cookie, until it expires, is
// ended, or the user's password changes. Kept in the database, so that every node of several
// (README: "Several appliances as one") knows every session and a restart signs nobody out.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Credential } from '../config.js';
import { credentialCheck } from '../credentials.js';
import type { Duty } from '../duty-runner.js';
import type { SessionRecord, SessionStore } from './session-store.js';

/** 12 h: a control-room shift; then the console asks for the password again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Expired sessions open nothing (they are read with their expiry); the table is cleared of them this often. */
export const EXPIRED_SESSIONS_SWEEP_MS = 60 * 60 * 1000;

/** The sessions' retention: `sessions.expired`, hourly: the table stays as small as the signed-in browsers. */
export function expiredSessionsDuty(store: SessionStore, now: () => number = Date.now): Duty {
  return {
    name: 'sessions.expired',
    intervalMs: EXPIRED_SESSIONS_SWEEP_MS,
    atStart: true,
    run: async () => ({ deleted: await store.deleteExpired(now()) }),
  };
}

export interface OpenedSession {
  /** The secret the cookie carries; stored only as its hash. */
  token: string;
  session: SessionRecord;
}

export class Sessions {
  private readonly known: (pair: string) => boolean;

  constructor(
    private readonly store: SessionStore,
    private readonly credentials: Credential[],
    private readonly now: () => number = Date.now,
  ) {
    this.known = credentialCheck(credentials);
  }

  /** A new session for a configured user and password; null for wrong ones. */
  async open(user: string, password: string): Promise<OpenedSession | null> {
    if (user.includes(':') || !this.known(`${user}:${password}`)) return null;
    const token = randomBytes(32).toString('base64url');
    const at = this.now();
    const session: SessionRecord = {
      tokenHash: hashToken(token),
      user,
      credentialTag: credentialTag(token, user, password),
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: at,
      expiresAt: at + SESSION_TTL_MS,
    };
    await this.store.insert(session);
    return { token, session };
  }

  /** The live session of a cookie's token: null when unknown, expired, or its user's credentials changed. */
  async resolve(token: string): Promise<SessionRecord | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const session = await this.store.find(hashToken(token), this.now());
    if (!session) return null;
    const current = this.credentials.filter((c) => c.user === session.user);
    return current.some((c) => sameText(credentialTag(token, c.user, c.password), session.credentialTag)) ? session : null;
  }

  async end(token: string): Promise<void> {
    if (/^[A-Za-z0-9_-]{43}$/.test(token)) await this.store.delete(hashToken(token));
  }
}

/** Whether a request's X-CSRF-Token is its session's (constant time). */
export function csrfTokenMatches(session: SessionRecord, presented: string): boolean {
  return presented.length > 0 && sameText(presented, session.csrfToken);
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Keyed by the token, which the table does not hold: the column alone tells nothing of the password. */
function credentialTag(token: string, user: string, password: string): string {
  return createHmac('sha256', token).update(`${user}:${password}`).digest('hex');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
