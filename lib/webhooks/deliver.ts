// One delivery attempt: a signed POST of the event's body. A 2xx delivers it; anything else (a
// 3xx too: redirects are never followed, so a receiver cannot send the service elsewhere), a
// refused connection or no answer within the time limit is a failed attempt, tried again later.
import { SERVER_HEADER } from '../version.js';
import { signatureOf } from './sign.js';
import type { Delivery } from './outbox-store.js';

export interface AttemptResult {
  ok: boolean;
  /** The receiver's status; null when it gave none. */
  status: number | null;
  /** Why it failed, for the outbox row and the log. */
  error: string | null;
}

export interface AttemptOptions {
  secret: string;
  timeoutMs: number;
  /** Aborts the attempt (the node is stopping). */
  signal?: AbortSignal;
  now?: () => number;
}

export async function attemptDelivery(d: Delivery, options: AttemptOptions): Promise<AttemptResult> {
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
  const headers = {
    'content-type': 'application/json',
    'x-event-id': d.eventId,
    'x-event-type': d.eventType,
    'x-timestamp': String(timestamp),
    'x-signature': signatureOf(options.secret, timestamp, d.body),
  };
  const { answer: _answer, ...result } = await postOnce(d.url, headers, d.body, options);
  return result;
}

/** What a receiver answered: the attempt's result, and the start of its text when `keepAnswer` asked for it. */
export interface PostResult extends AttemptResult {
  answer: string | null;
}

/**
 * One POST of an event to `url`, whatever its form: a 2xx delivers it; anything else, no answer
 * within the time limit or a refused connection is a failed attempt. The answer's text is read
 * (its first `keepAnswer` characters) only when asked for; otherwise it is dropped unread.
 */
export async function postOnce(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; signal?: AbortSignal; keepAnswer?: number },
): Promise<PostResult> {
  const url = new URL(target);
  // Checked at upload and at start already; a row written by something else is not sent anywhere else.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, status: null, error: `not an http(s) URL: ${url.protocol}`, answer: null };
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const res = await fetch(url, { method: 'POST', redirect: 'manual', signal, headers: { 'user-agent': SERVER_HEADER, ...headers }, body });
    // An answer not asked for is dropped: that frees the connection.
    const answer = options.keepAnswer ? (await res.text().catch(() => '')).slice(0, options.keepAnswer).trim() || null : null;
    if (!options.keepAnswer) await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null, answer };
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    return { ok: false, status: res.status, error: `HTTP ${res.status}${redirect}${answer ? `: ${answer.slice(0, 120)}` : ''}`, answer };
  } catch (err) {
    if (timeout.aborted) return { ok: false, status: null, error: `no answer within ${options.timeoutMs} ms`, answer: null };
    if (options.signal?.aborted) return { ok: false, status: null, error: 'abandoned: the node is stopping', answer: null };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, status: null, error: e.cause?.code ?? e.cause?.message ?? e.message, answer: null };
  }
}
