// The appliance's events on an MQTT broker, where Home Assistant, Node-RED and Frigate-minded
// automation listen. Under MQTT_TOPIC_PREFIX (`vaa` by default):
//
// - `<prefix>/available`: `online`, retained, with `offline` as the connection's last will;
// - `<prefix>/cameras/<camera>/state`: each camera's state as events show it, retained, so a
//   newcomer sees every camera at once: published as it is when each event of the camera goes out
//   (its checks, changes of state, acknowledgements), and all of them after every (re)connection
//   and every 5 minutes (the `mqtt.states` duty: cameras that had no event yet; a deleted camera's
//   retained state is cleared then);
// - `<prefix>/events`: each event as it happens, JSON with its `type` (job.completed,
//   camera.state_changed, camera.acknowledged), QoS 1.
//
// Events reach the broker through the webhooks' outbox (lib/webhooks/): a row for the receiver
// `mqtt:` is written with the event's cause, claimed by one node, published, and marked delivered
// once the broker acknowledged it (PUBACK). So an event raised while the broker is down waits, in
// order, and a restart of the appliance loses none; after a reconnection the waiting ones are due
// at once. Each node keeps its own connection (and last will): a node that sees another's will
// while it is itself connected says `online` again.
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { MqttSettings } from '../config.js';
import type { Duty } from '../duty-runner.js';
import type { AttemptResult } from '../webhooks/deliver.js';
import type { Delivery } from '../webhooks/outbox-store.js';

/** What the output reads of the cameras: each one's state as events show it (presentCameraSummary), for the retained topics. */
export interface CameraStates {
  all(): Promise<{ camera: string; state: Record<string, unknown> }[]>;
  /** Null for a camera no longer on record. */
  one(camera: string): Promise<Record<string, unknown> | null>;
}

export interface MqttOutputOptions {
  settings: MqttSettings;
  /** This node's name: its client id is `<prefix>-<node>`. */
  nodeId: string;
  cameras: CameraStates;
  logger: Logger;
  /** Called after each (re)connection: the outbox's waiting events are due now. */
  onConnected(): void;
  /** Time limit of one publication (the broker's PUBACK), ms. */
  timeoutMs: number;
}

/** Seconds between reconnection attempts. */
const RECONNECT_MS = 2000;

export class MqttOutput {
  private readonly client: MqttClient;
  private readonly prefix: string;
  private connectedAt: number | null = null;
  private stopping = false;
  /** Cameras whose state the broker retains (heard on its topic): one no longer on record is cleared. */
  private readonly retained = new Set<string>();

  constructor(private readonly o: MqttOutputOptions) {
    const s = o.settings;
    this.prefix = s.topicPrefix;
    this.client = mqtt.connect(s.url, {
      clientId: `${s.topicPrefix}-${o.nodeId}`.replace(/[^\w.-]/g, '_').slice(0, 64),
      username: s.username ?? undefined,
      password: s.password ?? undefined,
      protocolVersion: 4, // 3.1.1: every broker speaks it; 5 adds nothing the topics need
      reconnectPeriod: RECONNECT_MS,
      connectTimeout: 10_000,
      clean: true,
      will: { topic: this.topic('available'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    this.client.on('connect', () => void this.onConnect());
    this.client.on('close', () => {
      if (this.connectedAt !== null) o.logger.warn({ broker: s.url }, 'MQTT broker connection lost; events wait in the outbox');
      this.connectedAt = null;
    });
    // the broker's URL without credentials only (MqttSettings.url); errors repeat with each retry
    this.client.on('error', (err) => o.logger.debug({ broker: s.url, err: err.message }, 'MQTT broker connection failed'));
    const statePrefix = `${this.topic('cameras')}/`;
    this.client.on('message', (topic, payload) => {
      // another node's last will: this node is still here
      if (topic === this.topic('available') && payload.toString() === 'offline' && this.client.connected && !this.stopping) void this.announceOnline();
      if (topic.startsWith(statePrefix) && topic.endsWith('/state')) {
        const camera = topic.slice(statePrefix.length, -'/state'.length);
        if (payload.length > 0) this.retained.add(camera);
        else this.retained.delete(camera);
      }
    });
  }

  get connected(): boolean {
    return this.client.connected;
  }

  topic(...parts: string[]): string {
    return [this.prefix, ...parts].join('/');
  }

  private async onConnect(): Promise<void> {
    this.connectedAt = Date.now();
    const { logger, settings } = this.o;
    logger.info({ broker: settings.url }, 'MQTT broker connected');
    try {
      await this.announceOnline();
      await this.client.subscribeAsync([this.topic('available'), this.topic('cameras', '+', 'state')], { qos: 1 });
      await this.publishStates();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'MQTT: the retained states were not all published; they are again at the next connection');
    }
    this.o.onConnected();
  }

  /** Every camera's state, retained; resolves with how many (none while the broker is away). */
  async publishStates(): Promise<number> {
    if (!this.client.connected) return 0;
    const all = await this.o.cameras.all();
    for (const { camera, state } of all) await this.publishState(camera, state);
    // a deleted camera's retained state goes (an empty retained message clears it)
    const onRecord = new Set(all.map((c) => c.camera));
    for (const camera of [...this.retained]) {
      if (!onRecord.has(camera)) await this.client.publishAsync(this.topic('cameras', camera, 'state'), '', { qos: 1, retain: true });
    }
    return all.length;
  }

  private announceOnline(): Promise<unknown> {
    return this.client.publishAsync(this.topic('available'), 'online', { qos: 1, retain: true });
  }

  private publishState(camera: string, state: Record<string, unknown>): Promise<unknown> {
    return this.client.publishAsync(this.topic('cameras', camera, 'state'), JSON.stringify(state), { qos: 1, retain: true });
  }

  /** One outbox delivery: the event on `<prefix>/events`, and a camera's new state retained. Fails at once while the broker is away. */
  async deliver(d: Delivery): Promise<AttemptResult> {
    if (!this.client.connected) return { ok: false, status: null, error: 'the MQTT broker is not connected' };
    const body = JSON.parse(d.body) as Record<string, unknown>;
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no PUBACK in time')), this.o.timeoutMs).unref());
    try {
      await Promise.race([
        (async () => {
          // the camera's state as it is now: a backlog's last event of a camera leaves it current
          const camera = cameraOf(body);
          const state = camera === null ? null : await this.o.cameras.one(camera);
          if (camera !== null && state) await this.publishState(camera, state);
          await this.client.publishAsync(this.topic('events'), JSON.stringify({ type: d.eventType, event_id: d.eventId, ...body }), { qos: 1 });
        })(),
        timeout,
      ]);
      return { ok: true, status: 0, error: null };
    } catch (err) {
      return { ok: false, status: null, error: `MQTT: ${(err as Error).message}` };
    }
  }

  /** Says `offline` (as the will would) and disconnects. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.client.connected) await this.client.publishAsync(this.topic('available'), 'offline', { qos: 1, retain: true }).catch(() => {});
    await this.client.endAsync().catch(() => {});
  }
}

/** The camera an event is about: a camera's event names it, a tamper check's task may. */
function cameraOf(body: Record<string, unknown>): string | null {
  const camera = (body.camera as { camera?: unknown } | undefined)?.camera ?? (body.task as { camera?: unknown } | undefined)?.camera;
  return typeof camera === 'string' ? camera : null;
}

/** `mqtt.states`: every camera's state retained again, every 5 minutes (a camera with no event yet shows too). */
export function mqttStatesDuty(output: MqttOutput): Duty {
  return { name: 'mqtt.states', intervalMs: 5 * 60 * 1000, run: async () => ({ published: await output.publishStates() }) };
}
