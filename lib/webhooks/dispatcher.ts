// Delivers the outbox's events to their receivers, on every node that is running: claims due
// deliveries with a lease (outbox-store.ts), POSTs each signed (deliver.ts), marks it delivered
// right after the 2xx, or schedules the next attempt with backoff (backoff.ts) until the retry
// window is over. The job store wakes it when a job finishes anywhere (its events are written in the
// same transaction); it also polls, for retries that came due and events other nodes wrote.
//
// A restart loses nothing: the events are rows, written with their cause. A crash repeats at most
// the one delivery per receiver it interrupted: each receiver has one delivery in flight at a
// time (the oldest pending), and a 2xx is recorded before the next one starts.
import type { Logger } from 'pino';
import { DatabaseUnavailableError } from '../db/errors.js';
import type { Duty } from '../duty-runner.js';
import type { StoreEvent } from '../jobs/store.js';
import type { WebhookDeliveryOutcome } from '../metrics.js';
import { nextAttemptAt, type RetryPolicy } from './backoff.js';
import { attemptDelivery, type AttemptResult } from './deliver.js';
import { deliverToMilestone } from '../milestone/deliver.js';
import { MILESTONE_RECEIVER, MQTT_RECEIVER, outputOf } from './outbox.js';
import type { Delivery, OutboxStore } from './outbox-store.js';

export interface DispatcherOptions {
  outbox: OutboxStore;
  /** The outbox is shared by several nodes (PostgreSQL): a start releases only this node's leases. */
  shared: boolean;
  /** Jobs finished anywhere (their events were written with their outcome): JobStore.subscribe. */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  logger: Logger;
  /** This node's name on the leases it holds (NODE_ID). */
  nodeId: string;
  /** The signing key's text. */
  secret: string;
  /** Time limit of one attempt (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Told every attempt's outcome and duration (Prometheus), and what XProtect answered. */
  metrics?: {
    observeWebhookDelivery(eventType: string, outcome: WebhookDeliveryOutcome, seconds: number): void;
    observeOutputDelivery(output: 'mqtt' | 'milestone', outcome: WebhookDeliveryOutcome): void;
    observeMilestoneAnswer(status: number | null): void;
  };
  /** How often due deliveries are looked for without a wake-up. @defaultValue 1000 */
  pollMs?: number;
  /** Publishes the deliveries of the receiver `mqtt:` (lib/mqtt/); absent without MQTT_URL. */
  mqtt?: { deliver(d: Delivery): Promise<AttemptResult> } | null;
}

/** Receivers served at once by one node (one delivery each): a slow receiver does not hold up the others. */
const PARALLEL_DELIVERIES = 8;
/** A claim outlasts its attempt's time limit by this much, for the write of its outcome. */
const LEASE_MARGIN_MS = 60_000;
/** Delivered and given-up rows are kept this long (to look into a receiver's complaint), then purged hourly. */
const KEEP_FINISHED_MS = 7 * 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

/** The webhooks' retention: `webhooks.outbox`, hourly. */
export function outboxDuty(outbox: OutboxStore, now: () => number = Date.now): Duty {
  return {
    name: 'webhooks.outbox',
    intervalMs: PURGE_EVERY_MS,
    run: async () => ({ purged: await outbox.purge(now() - KEEP_FINISHED_MS) }),
  };
}

export class WebhookDispatcher {
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly abandon = new AbortController();
  private started = false;
  private stopping = false;
  /** The claiming loop while it runs: a stop waits for it, so no claim outlives the store. */
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private timers: NodeJS.Timeout[] = [];
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: DispatcherOptions) {}

  private get leaseMs(): number {
    return this.options.timeoutMs + LEASE_MARGIN_MS;
  }

  /** Deliveries in progress on this node. */
  get deliveringHere(): number {
    return this.inFlight.size;
  }

  async start(): Promise<void> {
    const { outbox, shared, nodeId, logger, pollMs = 1000 } = this.options;
    // One box's outbox is this process's alone: every lease left in it is its previous run's.
    await outbox.release(shared ? nodeId : null).catch((err) =>
      logger.warn({ err: (err as Error).message }, 'cannot release the webhook deliveries of the last run; they go on once their lease runs out'),
    );
    this.started = true;
    this.unsubscribe = this.options.subscribe((event) => {
      if (event.type === 'finished' || event.type === 'reconnected') this.pump();
    });
    const poll = setInterval(() => this.pump(), pollMs);
    poll.unref();
    this.timers.push(poll);
    this.pump();
  }

  /**
   * Stops claiming; waits up to `graceMs` for deliveries in progress, then abandons the rest
   * (recorded as failed attempts, due at once: the next start or another node sends them again).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.unsubscribe?.();
    const all = () => Promise.allSettled([...this.inFlight.values()]);
    await Promise.race([all(), new Promise((r) => setTimeout(r, graceMs).unref())]);
    await this.pumping;
    this.abandon.abort();
    await all();
  }

  /** Claims due deliveries while this node has room. Calls that arrive while it runs make it look once more. */
  private pump(): void {
    if (!this.started || this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    // Cleared in a later turn (finally), never before it is set, even when the loop has nothing to
    // do; a call that came after the loop's last look makes it look again.
    this.pumping = this.claimWhileRoom().finally(() => {
      this.pumping = null;
      if (this.pumpAgain) this.pump();
    });
  }

  private async claimWhileRoom(): Promise<void> {
    const { outbox, nodeId, logger } = this.options;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopping && this.inFlight.size < PARALLEL_DELIVERIES) {
          const room = PARALLEL_DELIVERIES - this.inFlight.size;
          const claimed = await outbox.claim(nodeId, this.leaseMs, room);
          for (const d of claimed) {
            const run = this.deliver(d).catch((err) => logger.error({ err, event_id: d.eventId }, 'webhook delivery failed outside its attempt'));
            this.inFlight.set(d.seq, run);
            void run.finally(() => {
              this.inFlight.delete(d.seq);
              this.pump(); // the receiver's next event may be waiting
            });
          }
          if (claimed.length < room) break;
        }
      } while (this.pumpAgain && !this.stopping);
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) logger.debug({ err: (err as Error).message }, 'cannot claim webhook deliveries: the database does not answer');
      else logger.error({ err }, 'claiming webhook deliveries failed');
    }
  }

  private async deliver(d: Delivery): Promise<void> {
    const { outbox, secret, timeoutMs, retry, metrics } = this.options;
    const logger = this.options.logger.child({ event_id: d.eventId, event_type: d.eventType, receiver: receiverName(d.url), attempt: d.attempt });
    const leaseEnds = Date.now() + this.leaseMs;
    // A monotonic clock with sub-millisecond steps: a delivery on the same host takes less than one.
    const started = performance.now();
    const output = outputOf(d.url);
    const result =
      output === 'mqtt'
        ? await this.publish(d)
        : output === 'milestone'
          ? await deliverToMilestone(d, { timeoutMs, signal: this.abandon.signal })
          : await attemptDelivery(d, { secret, timeoutMs, signal: this.abandon.signal });
    const seconds = (performance.now() - started) / 1000;
    const observe = (outcome: WebhookDeliveryOutcome) =>
      output === 'webhook' ? metrics?.observeWebhookDelivery(d.eventType, outcome, seconds) : metrics?.observeOutputDelivery(output, outcome);
    if (output === 'milestone' && 'answer' in result) {
      metrics?.observeMilestoneAnswer(result.status);
      logger.info({ status: result.status, answer: result.answer, ms: Math.round(seconds * 1000) }, 'XProtect answered an analytics event');
    }
    if (result.ok) {
      await this.whileUnavailable(() => outbox.markDelivered(d, result.status!), leaseEnds, logger);
      // Counted once recorded: a scrape never sees a delivery counted and still pending.
      observe('delivered');
      logger.debug({ status: result.status, ms: Math.round(seconds * 1000) }, 'webhook delivered');
      return;
    }
    const now = Date.now();
    // An attempt abandoned by a stop goes again at once, on the next start or another node.
    const next = this.abandon.signal.aborted ? now : nextAttemptAt(retry, d.createdAt, d.attempt, now);
    const recorded = await this.whileUnavailable(() => outbox.markFailed(d, { status: result.status, error: result.error ?? 'failed', nextAttemptAt: next }, now), leaseEnds, logger);
    observe(next === null ? 'gave_up' : 'failed');
    if (!recorded) return; // another attempt holds it now
    if (next === null) {
      logger.warn({ status: result.status, reason: result.error, attempts: d.attempt }, 'webhook delivery given up: the receiver did not accept it within the retry window');
    } else {
      logger.info({ status: result.status, reason: result.error, retry_in_ms: next - now }, 'webhook delivery failed; trying again later');
      this.wakeUpAt(next);
    }
  }

  private publish(d: Delivery): Promise<AttemptResult> {
    const mqtt = this.options.mqtt;
    return mqtt ? mqtt.deliver(d) : Promise.resolve({ ok: false, status: null, error: 'MQTT_URL is not set on this node' });
  }

  /** Looks for due deliveries now (a receiver is back). */
  nudge(): void {
    this.pump();
  }

  /**
   * Runs a write of an outcome, trying again while the database does not answer, until the
   * delivery's lease ends (after that another node may send it again anyway). False when it
   * could not be written.
   */
  private async whileUnavailable(write: () => Promise<unknown>, until: number, logger: Logger): Promise<boolean> {
    for (;;) {
      try {
        return (await write()) !== false;
      } catch (err) {
        if (!(err instanceof DatabaseUnavailableError) || Date.now() + 1000 > until) {
          logger.warn({ err: (err as Error).message }, 'cannot record the outcome of a webhook delivery; it will be sent again');
          return false;
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Looks again when a rescheduled delivery comes due, sooner than the next poll would. */
  private wakeUpAt(at: number): void {
    if (this.stopping || at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, Math.max(0, at - Date.now()));
    this.wakeTimer.unref();
  }
}

/** The receiver's origin and path for the log: a query may carry a client's token. */
function receiverName(url: string): string {
  if (url === MQTT_RECEIVER) return 'the MQTT broker';
  if (url.startsWith(MILESTONE_RECEIVER)) return `XProtect at ${receiverName(url.slice(MILESTONE_RECEIVER.length))}`;
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
