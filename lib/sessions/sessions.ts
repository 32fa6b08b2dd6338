// Signed-in browsers of the operator console: a session is opened with a user's name and
// password (lib/users/) and then stands in for them, from a cookie, until it expires, is ended,
// or the user's password changes or the user goes. Kept in the database, so that every node of
// several (README: "Several appliances as one") knows every session and a restart signs nobody out.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Duty } from '../duty-runner.js';
import type { Principal } from '../users/roles.js';
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
  session: SessionRecord & { principal: Principal };
}

/** What sessions need of the users (lib/users/): a sign-in's check, and a user's current password hash. */
export interface SessionUsers {
  /** The password hash of a user whose password was right; `throttled` with the seconds to wait; null when wrong. */
  signIn(user: string, password: string, address: string): Promise<{ passwordHash: string; principal: Principal } | { throttled: number } | null>;
  /** The user now: its password hash, and who it is to the API; null when there is no such user. */
  current(user: string): Promise<{ passwordHash: string; principal: Principal } | null>;
}

export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly users: SessionUsers,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session for a user and its password; null for wrong ones, `throttled` past the sign-in limits. */
  async open(user: string, password: string, address: string): Promise<OpenedSession | { throttled: number } | null> {
    if (user.includes(':')) return null;
    const signedIn = await this.users.signIn(user, password, address);
    if (!signedIn || 'throttled' in signedIn) return signedIn;
    const token = randomBytes(32).toString('base64url');
    const at = this.now();
    const session: SessionRecord = {
      tokenHash: hashToken(token),
      user,
      credentialTag: credentialTag(token, signedIn.passwordHash),
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: at,
      expiresAt: at + SESSION_TTL_MS,
    };
    await this.store.insert(session);
    return { token, session: { ...session, principal: signedIn.principal } };
  }

  /** The live session of a cookie's token: null when unknown, expired, or its user's password changed or the user went. */
  async resolve(token: string): Promise<(SessionRecord & { principal: Principal }) | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const session = await this.store.find(hashToken(token), this.now());
    if (!session) return null;
    const current = await this.users.current(session.user);
    return current !== null && sameText(credentialTag(token, current.passwordHash), session.credentialTag) ? { ...session, principal: current.principal } : null;
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

/** Keyed by the token, which the table does not hold: the column alone tells nothing of the hash. */
function credentialTag(token: string, passwordHash: string): string {
  return createHmac('sha256', token).update(passwordHash).digest('hex');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
