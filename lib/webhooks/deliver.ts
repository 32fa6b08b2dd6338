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
  const url = new URL(d.url);
  // Checked at upload and at start already; a row written by something else is not sent anywhere else.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, status: null, error: `not an http(s) URL: ${url.protocol}` };
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': SERVER_HEADER,
        'x-event-id': d.eventId,
        'x-event-type': d.eventType,
        'x-timestamp': String(timestamp),
        'x-signature': signatureOf(options.secret, timestamp, d.body),
      },
      body: d.body,
    });
    // The answer's body is not used: dropping it frees the connection.
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null };
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    return { ok: false, status: res.status, error: `HTTP ${res.status}${redirect}` };
  } catch (err) {
    if (timeout.aborted) return { ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` };
    if (options.signal?.aborted) return { ok: false, status: null, error: 'abandoned: the node is stopping' };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, status: null, error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}
