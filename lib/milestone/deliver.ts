// One delivery of an analytics event to XProtect's event server: `POST /` with the document as
// text/xml, as its analytics events port expects. A 2xx delivers it; anything else, no answer in
// time or a refused connection is a failed attempt, tried again later like a webhook. What the
// server answered (its status and the start of its text, which names what it did not accept)
// comes back for the log and /metrics.
import { SERVER_HEADER } from '../version.js';
import type { AttemptResult } from '../webhooks/deliver.js';
import { MILESTONE_RECEIVER } from '../webhooks/outbox.js';
import type { Delivery } from '../webhooks/outbox-store.js';

/** The start of the server's answer that the log keeps. */
const ANSWER_CHARS = 300;

export interface MilestoneAttempt extends AttemptResult {
  /** The start of the server's answer; null when it gave none. */
  answer: string | null;
}

export async function deliverToMilestone(d: Delivery, o: { timeoutMs: number; signal?: AbortSignal }): Promise<MilestoneAttempt> {
  const url = d.url.slice(MILESTONE_RECEIVER.length);
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  try {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: { 'content-type': 'text/xml; charset=utf-8', 'user-agent': SERVER_HEADER },
      body: d.body,
    });
    const answer = (await res.text().catch(() => '')).slice(0, ANSWER_CHARS).trim() || null;
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null, answer };
    return { ok: false, status: res.status, error: `HTTP ${res.status}${answer ? `: ${answer.slice(0, 120)}` : ''}`, answer };
  } catch (err) {
    if (timeout.aborted) return { ok: false, status: null, error: `no answer within ${o.timeoutMs} ms`, answer: null };
    if (o.signal?.aborted) return { ok: false, status: null, error: 'abandoned: the node is stopping', answer: null };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, status: null, error: e.cause?.code ?? e.cause?.message ?? e.message, answer: null };
  }
}
