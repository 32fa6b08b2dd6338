// The events the appliance announces: a type, a JSON body sent as it is, and where it goes beside
// WEBHOOK_URL. The modules that cause them write them into the outbox (OutboxStore.enqueue) in
// the transaction of their cause; the dispatcher delivers them from there.

export type WebhookEventType = 'job.completed' | 'camera.state_changed' | 'camera.acknowledged';

/** The outbox's receiver that stands for the MQTT broker (lib/mqtt/): its events are published, not POSTed. */
export const MQTT_RECEIVER = 'mqtt:';

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
  /** MQTT_URL is set: every event is published there too. */
  mqtt?: boolean;
}

/** Where the service's events go, from its settings. */
export function eventTargets(config: { webhookUrl: string | null; mqtt: unknown }): WebhookTargets {
  return { webhookUrl: config.webhookUrl, mqtt: config.mqtt !== null };
}
