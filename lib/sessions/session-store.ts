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
  created_at: number;
  expires_at: number;
}

export class SessionStore {
  constructor(private readonly db: Database) {}

  async insert(s: SessionRecord): Promise<void> {
    await this.db.sql.run(
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
  async find(tokenHash: string, now: number): Promise<SessionRecord | null> {
    const r = await this.db.sql.get<SessionRow>('SELECT * FROM sessions WHERE token_hash = ? AND expires_at > ?', tokenHash, now);
    if (!r) return null;
    return { tokenHash: r.token_hash, user: r.user_name, credentialTag: r.credential_tag, csrfToken: r.csrf_token, createdAt: r.created_at, expiresAt: r.expires_at };
  }

  async delete(tokenHash: string): Promise<void> {
    await this.db.sql.run('DELETE FROM sessions WHERE token_hash = ?', tokenHash);
  }

  /** Drops the sessions that have expired by `now` (the sessions' retention); resolves with how many. */
  async deleteExpired(now: number): Promise<number> {
    return this.db.sql.run('DELETE FROM sessions WHERE expires_at <= ?', now);
  }
}
