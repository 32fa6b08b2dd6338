// The users and API keys of the appliance, as the API changes them: the last admin stays, a
// changed password ends the user's console sessions (lib/sessions/ reads the hash they were
// opened with), and a key's secret is given out once.
import { InvalidInputError, ServiceError } from '../errors.js';
import { newApiKey } from './api-key-format.js';
import { hashPassword } from './passwords.js';
import type { Role } from './roles.js';
import type { ApiKeyRecord, UserRecord, UserStore } from './user-store.js';

export class UserConflictError extends ServiceError {
  constructor(message: string) {
    super('conflict', message, { status: 409, expose: true });
  }
}

export class NoSuchUserError extends ServiceError {
  constructor(what: string) {
    super('not_found', `no ${what}`, { status: 404, expose: true });
  }
}

export interface UserChange {
  password?: string;
  role?: Role;
  cameras?: string[] | null;
}

export class Users {
  constructor(
    private readonly store: UserStore,
    private readonly now: () => number = Date.now,
    /** Told when a user's password changed: the credentials file of the first admin goes then. */
    private readonly onPasswordChanged: (name: string) => void = () => {},
  ) {}

  list(): Promise<UserRecord[]> {
    return this.store.list();
  }

  get(name: string): Promise<UserRecord | null> {
    return this.store.get(name);
  }

  async create(name: string, password: string, role: Role, cameras: string[] | null): Promise<UserRecord> {
    const at = this.now();
    const user: UserRecord = { name, passwordHash: await hashPassword(password), role, cameras, createdAt: at, passwordChangedAt: at };
    const inserted = await this.store.transaction((tx) => tx.insert(user));
    if (!inserted) throw new UserConflictError(`a user named "${name}" exists already`);
    return user;
  }

  /** Resolves the user before and after the change. */
  async update(name: string, change: UserChange): Promise<{ before: UserRecord; after: UserRecord }> {
    const passwordHash = change.password === undefined ? null : await hashPassword(change.password);
    const result = await this.store.transaction(async (tx) => {
      if (change.role !== undefined || change.cameras !== undefined) await tx.lockAdmins();
      const before = await tx.get(name);
      if (!before) throw new NoSuchUserError(`user named "${name}"`);
      const after: UserRecord = {
        ...before,
        role: change.role ?? before.role,
        cameras: change.cameras === undefined ? before.cameras : change.cameras,
        ...(passwordHash ? { passwordHash, passwordChangedAt: this.now() } : {}),
      };
      if (before.role === 'admin' && (after.role !== 'admin' || after.cameras !== null)) await this.keepAnAdmin(tx, name);
      await tx.update(after);
      return { before, after };
    });
    if (passwordHash) this.onPasswordChanged(name);
    return result;
  }

  async delete(name: string): Promise<UserRecord> {
    const removed = await this.store.transaction(async (tx) => {
      await tx.lockAdmins();
      const user = await tx.get(name);
      if (!user) throw new NoSuchUserError(`user named "${name}"`);
      if (user.role === 'admin') await this.keepAnAdmin(tx, name);
      await tx.delete(name);
      return user;
    });
    this.onPasswordChanged(name);
    return removed;
  }

  listKeys(): Promise<ApiKeyRecord[]> {
    return this.store.listKeys();
  }

  /** The new key's record and its secret, which is shown this once. */
  async createKey(name: string, role: Role, cameras: string[] | null, expiresAt: number | null, createdBy: string): Promise<{ record: ApiKeyRecord; key: string }> {
    const at = this.now();
    if (expiresAt !== null && expiresAt <= at) throw new InvalidInputError('"expires_at" must be in the future');
    const made = newApiKey();
    const record: ApiKeyRecord = { id: made.id, name, secretHash: made.secretHash, role, cameras, createdBy, createdAt: at, expiresAt, lastUsedAt: null };
    await this.store.insertKey(record);
    return { record, key: made.key };
  }

  async revokeKey(id: string): Promise<ApiKeyRecord> {
    const key = await this.store.getKey(id);
    if (!key || !(await this.store.deleteKey(id))) throw new NoSuchUserError(`API key "${id}"`);
    return key;
  }

  /** An admin of all cameras must remain besides `name` (under the admins' lock). */
  private async keepAnAdmin(tx: { admins(): Promise<string[]>; get(name: string): Promise<UserRecord | null> }, name: string): Promise<void> {
    for (const other of await tx.admins()) {
      if (other !== name && (await tx.get(other))?.cameras === null) return;
    }
    throw new UserConflictError(`"${name}" is the last admin of all cameras: make another user admin first`);
  }
}
