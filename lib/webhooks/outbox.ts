// Events to deliver are written to the outbox in the transaction of what caused them (a job's
// outcome, a camera's change of state), so an event exists exactly when its cause does; delivery
// (lib/webhooks/dispatcher.ts) reads them from there.
import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/database.js';
import { insertDelivery } from './deliveries.js';

export type WebhookEventType = 'job.completed' | 'camera.state_changed';

export interface WebhookEvent {
  type: WebhookEventType;
  /** The JSON body, sent as it is. */
  body: Record<string, unknown>;
  /** The per-request `callback_url` of the job that caused it, if any. */
  callbackUrl?: string | null;
}

export interface WebhookTargets {
  /** WEBHOOK_URL: every event goes there. */
  webhookUrl: string | null;
}

/**
 * One outbox row per receiver (WEBHOOK_URL and the job's callback_url), with one event id: a
 * receiver de-duplicates by it. Nothing is written when there is no receiver.
 */
export async function enqueueEvent(tx: Tx, targets: WebhookTargets, event: WebhookEvent, at: number): Promise<number> {
  const urls = [...new Set([targets.webhookUrl, event.callbackUrl].filter((u): u is string => !!u))];
  if (urls.length === 0) return 0;
  const eventId = randomUUID();
  const body = JSON.stringify(event.body);
  for (const url of urls) await insertDelivery(tx, { eventId, eventType: event.type, url, body, createdAt: at });
  return urls.length;
}
