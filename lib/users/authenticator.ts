// Checks what a request presents (a user's password, an API key) and says who it is, after the
// throttle (sign-in-throttle.ts) has let the attempt through. A password checked successfully is
// remembered for a few minutes, keyed by the stored hash it matched: a script that sends Basic
// credentials with every request costs one scrypt, and a changed password, a removed user or a
// revoked key is refused at the next request on every node, since the row is read each time.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { parseApiKey, secretMatches } from './api-key-format.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { Principal } from './roles.js';
import type { SignInThrottle } from './sign-in-throttle.js';
import type { UserRecord, UserStore } from './user-store.js';

export type SignInMethod = 'basic' | 'console' | 'key';

export type SignInResult =
  | { outcome: 'ok'; principal: Principal; user?: UserRecord }
  | { outcome: 'wrong' }
  | { outcome: 'throttled'; retryAfterS: number };

export interface SignInEvent {
  method: SignInMethod;
  /** The user name or key id presented (cut to 64 characters); never the password. */
  presented: string;
  address: string;
  outcome: 'ok' | 'wrong';
}

export interface AuthenticatorOptions {
  store: UserStore;
  throttle: SignInThrottle;
  logger: Logger;
  now?: () => number;
  metrics?: { countSignIn(method: SignInMethod, outcome: 'ok' | 'wrong' | 'throttled'): void; countPasswordHash(): void };
  /** Told of the attempts the throttle let through (every failure; a success as AUDIT_AGAIN_MS says): the audit trail. */
  onAttempt?: (event: SignInEvent) => void;
}

/** How long a verified password is taken without hashing it again. */
const REMEMBER_MS = 5 * 60 * 1000;
const REMEMBER_MAX = 1000;
/** A key's `last_used_at` is to the minute. */
export const KEY_USE_EVERY_MS = 60_000;
/** A Basic client's sign-in from an address it used within this long is not noted again. */
const AUDIT_AGAIN_MS = 24 * 60 * 60 * 1000;

export class Authenticator {
  private readonly remembered = new Map<string, number>();
  /** The same credentials by name and password alone, for when the database does not answer. */
  private readonly outage = new Map<string, { until: number; principal: Principal }>();
  /** Hashed against when the user does not exist, so that the answer takes as long as for one who does; made on first need. */
  private decoy: Promise<string> | null = null;
  /** When this node last recorded each key's use: the row is written at most once a minute, not per request. */
  private readonly keyUses = new Map<string, number>();

  constructor(private readonly options: AuthenticatorOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** A user's name and password (Basic, or the console's sign-in). */
  async password(name: string, password: string, address: string, method: 'basic' | 'console'): Promise<SignInResult> {
    const { store, throttle } = this.options;
    let user: UserRecord | null;
    try {
      const wait = await throttle.waitSeconds(address, name);
      if (wait > 0) return this.throttled(method, name, address, wait);
      user = await store.get(name);
    } catch (err) {
      // The database does not answer: credentials checked in the last minutes still open what
      // needs no database (/healthz says what is wrong); nothing else does, guesses included.
      const known = this.outage.get(outageKey(name, password));
      if (!known || known.until <= this.now) throw err;
      return { outcome: 'ok', principal: known.principal };
    }
    const memo = user ? rememberKey(name, password, user.passwordHash) : '';
    let ok = user !== null && (this.remembered.get(memo) ?? 0) > this.now;
    if (!ok) {
      this.options.metrics?.countPasswordHash();
      ok = await verifyPassword(password, user?.passwordHash ?? (await (this.decoy ??= hashPassword('decoy'))));
      ok &&= user !== null;
      if (ok) {
        this.remember(memo, outageKey(name, password), user!);
        const before = await throttle.succeeded(address, name);
        // A script's Basic credentials are checked anew every few minutes: the trail notes its
        // first sign-in of the day from an address, the console's every one.
        if (method === 'console' || before === null || before < this.now - AUDIT_AGAIN_MS) {
          this.options.onAttempt?.({ method, presented: name.slice(0, 64), address, outcome: 'ok' });
        }
      }
    }
    if (!ok || !user) return this.wrong(method, name, address, name);
    this.options.metrics?.countSignIn(method, 'ok');
    return { outcome: 'ok', principal: principalOf(user), user };
  }

  /** An API key, from `Authorization: Bearer` or as the password of Basic's `apikey` user. */
  async apiKey(text: string, address: string): Promise<SignInResult> {
    const { store, throttle } = this.options;
    const wait = await throttle.waitSeconds(address, null);
    if (wait > 0) return this.throttled('key', '', address, wait);
    const parsed = parseApiKey(text);
    const key = parsed ? await store.getKey(parsed.id) : null;
    const at = this.now;
    if (!parsed || !key || !secretMatches(parsed.secret, key.secretHash) || (key.expiresAt !== null && key.expiresAt <= at)) {
      return this.wrong('key', parsed?.id ?? '(not a key)', address, null);
    }
    this.options.metrics?.countSignIn('key', 'ok');
    if (at - (this.keyUses.get(key.id) ?? 0) >= KEY_USE_EVERY_MS) {
      if (this.keyUses.size >= REMEMBER_MAX) this.keyUses.clear();
      this.keyUses.set(key.id, at);
      void store.keyUsed(key.id, at).catch((err) => this.options.logger.warn({ err: (err as Error).message }, 'cannot record the use of an API key'));
    }
    return { outcome: 'ok', principal: { kind: 'key', id: key.id, label: `key:${key.id} (${key.name})`, role: key.role, cameras: key.cameras } };
  }

  private async wrong(method: SignInMethod, presented: string, address: string, user: string | null): Promise<SignInResult> {
    await this.options.throttle.failed(address, user);
    this.options.metrics?.countSignIn(method, 'wrong');
    this.options.logger.info({ method, user: presented.slice(0, 64), address }, 'sign-in refused');
    this.options.onAttempt?.({ method, presented: presented.slice(0, 64), address, outcome: 'wrong' });
    return { outcome: 'wrong' };
  }

  private throttled(method: SignInMethod, presented: string, address: string, retryAfterS: number): SignInResult {
    this.options.metrics?.countSignIn(method, 'throttled');
    this.options.logger.debug({ method, user: presented.slice(0, 64), address, retry_after_s: retryAfterS }, 'sign-in throttled');
    return { outcome: 'throttled', retryAfterS };
  }

  private remember(memo: string, outage: string, user: UserRecord): void {
    const at = this.now;
    if (this.remembered.size >= REMEMBER_MAX) {
      for (const [k, until] of this.remembered) if (until <= at) this.remembered.delete(k);
      if (this.remembered.size >= REMEMBER_MAX) this.remembered.delete(this.remembered.keys().next().value!);
    }
    if (this.outage.size >= REMEMBER_MAX) this.outage.delete(this.outage.keys().next().value!);
    this.remembered.set(memo, at + REMEMBER_MS);
    this.outage.set(outage, { until: at + REMEMBER_MS, principal: principalOf(user) });
  }
}

export const principalOf = (u: UserRecord): Principal => ({ kind: 'user', id: u.name, label: u.name, role: u.role, cameras: u.cameras });

function outageKey(name: string, password: string): string {
  return createHash('sha256').update(`${name}\0${password}`).digest('base64url');
}

/** Keyed by the stored hash too: the memory of a password ends when it changes. */
function rememberKey(name: string, password: string, stored: string): string {
  return createHash('sha256').update(`${name}\0${password}\0${stored}`).digest('base64url');
}
