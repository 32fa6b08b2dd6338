// One delivery of an analytics event to XProtect's event server: `POST /` with the document as
// text/xml, as its analytics events port expects, retried like a webhook (webhooks/deliver.ts).
// What the server answered (its status and the start of its text, which names what it did not
// accept) comes back for the log and /metrics.
import { postOnce, type PostResult } from '../webhooks/deliver.js';
import { MILESTONE_RECEIVER } from '../webhooks/outbox.js';
import type { Delivery } from '../webhooks/outbox-store.js';

/** The start of the server's answer that the log keeps. */
const ANSWER_CHARS = 300;

export function deliverToMilestone(d: Delivery, o: { timeoutMs: number; signal?: AbortSignal }): Promise<PostResult> {
  return postOnce(d.url.slice(MILESTONE_RECEIVER.length), { 'content-type': 'text/xml; charset=utf-8' }, d.body, { ...o, keepAnswer: ANSWER_CHARS });
}
