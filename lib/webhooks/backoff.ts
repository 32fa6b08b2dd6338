// When a failed delivery is tried again: the wait doubles from WEBHOOK_BACKOFF_MS (5 s, 10 s,
// 20 s, ...) up to an hour, with +-20 % jitter so that the deliveries a receiver's outage held
// back do not all come back in the same second; the last attempt is at the end of the retry
// window (24 h after the event), then the delivery is given up.

/** Longest wait between two attempts: a receiver back after an outage gets its events within the hour. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;
const JITTER = 0.2;

export interface RetryPolicy {
  /** Wait after the first failed attempt, ms. */
  baseMs: number;
  /** How long after the event's creation attempts go on, ms. */
  windowMs: number;
}

/** The wait after the `attempts`-th failed attempt (1 = the first), before jitter. */
export function backoffMs(attempts: number, baseMs: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(40, Math.max(0, attempts - 1)));
}

/**
 * The time of the next attempt after the `attempts`-th failed one at `now`, or null when the
 * retry window is over: the delivery is given up.
 */
export function nextAttemptAt(policy: RetryPolicy, createdAt: number, attempts: number, now: number, random = Math.random): number | null {
  const deadline = createdAt + policy.windowMs;
  if (now >= deadline) return null;
  const wait = backoffMs(attempts, policy.baseMs) * (1 - JITTER + 2 * JITTER * random());
  return Math.min(deadline, Math.round(now + wait));
}
