// Every statement of the sessions module (its table is in schema.ts).
import type { Database } from '../db/database.js';

export interface SessionRecord {
  /** SHA-256 (hex) of the session's token: the cookie carries the token, the table its hash. */
  tokenHash: string;
  user: string;
  /** HMAC of the user's credentials under the token: a changed password ends the session. */
  credentialTag: string;
  /** What requests that change something carry in X-CSRF-Token. */
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

interface SessionRow {
  token_hash: string;
  user_name: string;
  credential_tag: string;
  csrf_token: string;
  created_at: number | string;
  expires_at: number | string;
}

export async function insertSession(db: Database, s: SessionRecord): Promise<void> {
  await db.sql.run(
    'INSERT INTO sessions (token_hash, user_name, credential_tag, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
    s.tokenHash,
    s.user,
    s.credentialTag,
    s.csrfToken,
    s.createdAt,
    s.expiresAt,
  );
}

/** The session of a token hash unless it has expired by `now`. */
export async function findSession(db: Database, tokenHash: string, now: number): Promise<SessionRecord | null> {
  const r = await db.sql.get<SessionRow>('SELECT * FROM sessions WHERE token_hash = ? AND expires_at > ?', tokenHash, now);
  if (!r) return null;
  return {
    tokenHash: r.token_hash,
    user: r.user_name,
    credentialTag: r.credential_tag,
    csrfToken: r.csrf_token,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
}

export async function deleteSession(db: Database, tokenHash: string): Promise<void> {
  await db.sql.run('DELETE FROM sessions WHERE token_hash = ?', tokenHash);
}

/** Drops the sessions that have expired (at every sign-in: the table stays as small as the signed-in browsers). */
export async function deleteExpiredSessions(db: Database, now: number): Promise<number> {
  return db.sql.run('DELETE FROM sessions WHERE expires_at <= ?', now);
}
