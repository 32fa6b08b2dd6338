// Every statement on the users module's tables (schema.ts).
import type { Database, Tx } from '../db/database.js';
import type { Role } from './roles.js';

export interface UserRecord {
  name: string;
  passwordHash: string;
  role: Role;
  cameras: string[] | null;
  createdAt: number;
  passwordChangedAt: number;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  secretHash: string;
  role: Role;
  cameras: string[] | null;
  createdBy: string;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

interface UserRow {
  name: string;
  password_hash: string;
  role: string;
  cameras: string | null;
  created_at: number;
  password_changed_at: number;
}

interface KeyRow {
  id: string;
  name: string;
  secret_hash: string;
  role: string;
  cameras: string | null;
  created_by: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export type FailureScope = 'address' | 'user';

const toUser = (r: UserRow): UserRecord => ({
  name: r.name,
  passwordHash: r.password_hash,
  role: r.role as Role,
  cameras: r.cameras === null ? null : (JSON.parse(r.cameras) as string[]),
  createdAt: Number(r.created_at),
  passwordChangedAt: Number(r.password_changed_at),
});

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  role: r.role as Role,
  cameras: r.cameras === null ? null : (JSON.parse(r.cameras) as string[]),
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
});

const camerasJson = (cameras: string[] | null) => (cameras === null ? null : JSON.stringify(cameras));

export class UserStore {
  constructor(private readonly db: Database) {}

  transaction<T>(body: (tx: UserTx) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => body(new UserTx(tx)));
  }

  get(name: string): Promise<UserRecord | null> {
    return new UserTx(this.db.sql).get(name);
  }

  async list(): Promise<UserRecord[]> {
    return (await this.db.sql.all<UserRow>('SELECT * FROM users ORDER BY name')).map(toUser);
  }

  async count(): Promise<number> {
    return Number((await this.db.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM users'))!.n);
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.sql.get<KeyRow>('SELECT * FROM api_keys WHERE id = ?', id);
    return r ? toKey(r) : null;
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.sql.all<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKey);
  }

  async insertKey(k: ApiKeyRecord): Promise<void> {
    await this.db.sql.run(
      'INSERT INTO api_keys (id, name, secret_hash, role, cameras, created_by, created_at, expires_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)',
      k.id,
      k.name,
      k.secretHash,
      k.role,
      camerasJson(k.cameras),
      k.createdBy,
      k.createdAt,
      k.expiresAt,
    );
  }

  /** Resolves whether there was such a key. */
  async deleteKey(id: string): Promise<boolean> {
    return (await this.db.sql.run('DELETE FROM api_keys WHERE id = ?', id)) > 0;
  }

  /** Records a use (the authenticator calls it at most once a minute per key and node). */
  async keyUsed(id: string, at: number): Promise<void> {
    await this.db.sql.run(`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND ${this.db.dialect.lazyCommit}`, at, id);
  }

  /** The failures of each subject at or after `since`, oldest first. */
  async failuresSince(subjects: { scope: FailureScope; subject: string }[], since: number): Promise<{ scope: FailureScope; subject: string; at: number }[]> {
    if (subjects.length === 0) return [];
    const where = subjects.map(() => '(scope = ? AND subject = ?)').join(' OR ');
    const rows = await this.db.sql.all<{ scope: FailureScope; subject: string; at: number }>(
      `SELECT scope, subject, at FROM sign_in_failures WHERE at >= ? AND (${where}) ORDER BY at`,
      since,
      ...subjects.flatMap((s) => [s.scope, s.subject]),
    );
    return rows.map((r) => ({ ...r, at: Number(r.at) }));
  }

  async recordFailure(subjects: { scope: FailureScope; subject: string }[], at: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const s of subjects) await tx.run('INSERT INTO sign_in_failures (scope, subject, at) VALUES (?, ?, ?)', s.scope, s.subject, at);
    });
  }

  /** Resolves when the user last signed in from the address before now (null: never, or forgotten). */
  async recordSignInAddress(user: string, address: string, at: number): Promise<number | null> {
    const previous = await this.db.sql.get<{ last_at: number }>('SELECT last_at FROM sign_in_addresses WHERE user_name = ? AND address = ?', user, address);
    await this.db.sql.run(
      `INSERT INTO sign_in_addresses (user_name, address, last_at) VALUES (?, ?, ?)
       ON CONFLICT (user_name, address) DO UPDATE SET last_at = excluded.last_at`,
      user,
      address,
      at,
    );
    return previous ? Number(previous.last_at) : null;
  }

  async signedInFrom(user: string, address: string, since: number): Promise<boolean> {
    return (await this.db.sql.get('SELECT 1 AS known FROM sign_in_addresses WHERE user_name = ? AND address = ? AND last_at >= ?', user, address, since)) !== undefined;
  }

  /** The throttle's retention: failures older than its longest window, addresses not used for long. */
  async purgeSignIns(failuresBefore: number, addressesBefore: number): Promise<number> {
    const failures = await this.db.sql.run('DELETE FROM sign_in_failures WHERE at < ?', failuresBefore);
    const addresses = await this.db.sql.run('DELETE FROM sign_in_addresses WHERE last_at < ?', addressesBefore);
    return failures + addresses;
  }
}

/** The statements a change of users runs in one transaction (the last admin stays). */
export class UserTx {
  constructor(private readonly tx: Tx) {}

  async get(name: string): Promise<UserRecord | null> {
    const r = await this.tx.get<UserRow>('SELECT * FROM users WHERE name = ?', name);
    return r ? toUser(r) : null;
  }

  async admins(): Promise<string[]> {
    return (await this.tx.all<{ name: string }>(`SELECT name FROM users WHERE role = 'admin' ORDER BY name`)).map((r) => r.name);
  }

  /** Resolves false when the name is taken. */
  async insert(u: UserRecord): Promise<boolean> {
    const n = await this.tx.run(
      'INSERT INTO users (name, password_hash, role, cameras, created_at, password_changed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING',
      u.name,
      u.passwordHash,
      u.role,
      camerasJson(u.cameras),
      u.createdAt,
      u.passwordChangedAt,
    );
    return n > 0;
  }

  async update(u: UserRecord): Promise<void> {
    await this.tx.run(
      'UPDATE users SET password_hash = ?, role = ?, cameras = ?, password_changed_at = ? WHERE name = ?',
      u.passwordHash,
      u.role,
      camerasJson(u.cameras),
      u.passwordChangedAt,
      u.name,
    );
  }

  async delete(name: string): Promise<boolean> {
    return (await this.tx.run('DELETE FROM users WHERE name = ?', name)) > 0;
  }

  /** Locks the admins' rows (PostgreSQL) so that two removals cannot each leave the other as the last. */
  async lockAdmins(): Promise<void> {
    // An UPDATE locks on both backends (SQLite writes one transaction at a time anyway).
    await this.tx.run(`UPDATE users SET role = role WHERE role = 'admin'`);
  }
}
