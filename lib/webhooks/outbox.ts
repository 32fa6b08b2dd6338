// The events the appliance announces: a type, a JSON body sent as it is, and where it goes beside
// WEBHOOK_URL. The modules that cause them write them into the outbox (OutboxStore.enqueue) in
// the transaction of their cause; the dispatcher delivers them from there.

export type WebhookEventType = 'job.completed' | 'camera.state_changed' | 'camera.acknowledged';

/** The outbox's receiver that stands for the MQTT broker (lib/mqtt/): its events are published, not POSTed. */
export const MQTT_RECEIVER = 'mqtt:';
/** Before MILESTONE_EVENT_URL, the outbox's receiver of XProtect analytics events (lib/milestone/): XML, not JSON. */
export const MILESTONE_RECEIVER = 'milestone:';

export interface WebhookEvent {
  type: WebhookEventType;
  /** The JSON body, sent as it is. */
  body: Record<string, unknown>;
  /** The per-request `callback_url` of the job that caused it, if any. */
  callbackUrl?: string | null;
  /** The event as an XProtect analytics event (given its id), for a camera whose events go there. */
  milestone?: ((eventId: string) => string) | null;
}

export interface WebhookTargets {
  /** WEBHOOK_URL: every event goes there. */
  webhookUrl: string | null;
  /** MQTT_URL is set: every event is published there too. */
  mqtt?: boolean;
  /** MILESTONE_EVENT_URL: the events that have an XProtect form go there too. */
  milestoneUrl?: string | null;
}

/** Where the service's events go, from its settings. */
export function eventTargets(config: { webhookUrl: string | null; mqtt: unknown; milestoneEventUrl?: string | null }): WebhookTargets {
  return { webhookUrl: config.webhookUrl, mqtt: config.mqtt !== null, milestoneUrl: config.milestoneEventUrl ?? null };
}

/** What an outbox receiver is: a webhook's URL, the MQTT broker, or XProtect's event server. */
export function outputOf(receiver: string): 'webhook' | 'mqtt' | 'milestone' {
  if (receiver === MQTT_RECEIVER) return 'mqtt';
  return receiver.startsWith(MILESTONE_RECEIVER) ? 'milestone' : 'webhook';
}
