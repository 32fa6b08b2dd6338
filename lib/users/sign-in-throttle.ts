// Failed sign-ins are limited per client address and per user name, in windows such as Frigate's
// `1/second;5/minute;20/hour`. The counts live in the database, so every node of a cluster
// counts the same failures. An attempt past a limit is refused before its password is hashed,
// and is not itself counted: a client that keeps hammering waits for the window, not longer.
// The per-user limit spares the addresses the user signed in from before: someone else's
// failures against a name do not lock its owner out of the places they work from.
import type { Config, RateLimit as Limit } from '../config.js';
import type { FailureScope, UserStore } from './user-store.js';

/** How long a user's successful address spares it from the per-user limit. */
export const KNOWN_ADDRESS_MS = 30 * 86_400_000;

interface Subject {
  scope: FailureScope;
  subject: string;
}

export class SignInThrottle {
  private readonly longestMs: number;

  constructor(
    private readonly store: UserStore,
    private readonly limits: Config['signInLimits'],
    private readonly now: () => number = Date.now,
  ) {
    this.longestMs = Math.max(0, ...[...limits.perAddress, ...limits.perUser].map((l) => l.windowMs));
  }

  /** Failures older than this count for no limit: the retention of the failures. */
  get windowMs(): number {
    return this.longestMs;
  }

  /**
   * Seconds to wait before `address` may try (as `user`) again, or 0 when it may now. One read of
   * the shared table; a second only when the user's own limit is reached.
   */
  async waitSeconds(address: string, user: string | null): Promise<number> {
    if (this.longestMs === 0) return 0;
    const at = this.now();
    const subjects = this.subjects(address, user);
    const failures = await this.store.failuresSince(subjects, at - this.longestMs);
    const times = (scope: FailureScope) => failures.filter((f) => f.scope === scope).map((f) => f.at);
    let until = blockedUntil(times('address'), this.limits.perAddress, at);
    if (user !== null) {
      const byUser = blockedUntil(times('user'), this.limits.perUser, at);
      if (byUser > at && !(await this.store.signedInFrom(user, address, at - KNOWN_ADDRESS_MS))) until = Math.max(until, byUser);
    }
    return until > at ? Math.ceil((until - at) / 1000) : 0;
  }

  async failed(address: string, user: string | null): Promise<void> {
    if (this.longestMs > 0) await this.store.recordFailure(this.subjects(address, user), this.now());
  }

  /** Resolves when the user last signed in from `address` before (null: not in the last 30 days). */
  succeeded(address: string, user: string): Promise<number | null> {
    return this.store.recordSignInAddress(user, address, this.now());
  }

  private subjects(address: string, user: string | null): Subject[] {
    const s: Subject[] = [{ scope: 'address', subject: address }];
    if (user !== null) s.push({ scope: 'user', subject: user.slice(0, 256) });
    return s;
  }
}

/**
 * When the failures (`times`, oldest first) stop breaking every limit: for each limit they reach,
 * the moment the oldest of the last `count` leaves the window.
 */
function blockedUntil(times: number[], limits: Limit[], at: number): number {
  let until = 0;
  for (const { count, windowMs } of limits) {
    const inWindow = times.filter((t) => t > at - windowMs);
    if (inWindow.length >= count) until = Math.max(until, inWindow[inWindow.length - count] + windowMs);
  }
  return until;
}
