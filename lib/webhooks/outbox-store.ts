// The webhook outbox, every statement of the webhooks module (its table and migrations are in
// schema.ts): events written in the transaction of their cause (enqueue, called by the modules that
// announce things), then claimed with a lease, and marked delivered, rescheduled or given up.
//
// Only the oldest pending row of each receiver URL is claimable: a receiver gets its events one
// at a time, in the order they were created, from whichever node claims them, so a crash in the
// middle of a delivery repeats that one event only. A receiver that keeps refusing an event
// holds back its later events until that one is given up (the retry window).
//
// A claim is a compare-and-set on the row's attempt count: of two nodes that read the same row
// as claimable, only the first UPDATE matches (PostgreSQL re-reads a row another transaction
// changed before its UPDATE applies, and the count no longer matches); the other claims nothing.
import { randomUUID } from 'node:crypto';
import type { Database, Tx } from '../db/database.js';
import { MILESTONE_RECEIVER, MQTT_RECEIVER, type WebhookEvent, type WebhookEventType, type WebhookTargets } from './outbox.js';

export interface Delivery {
  seq: number;
  eventId: string;
  eventType: WebhookEventType;
  url: string;
  body: string;
  createdAt: number;
  /** This attempt's number (1 = the first): the fence of the writes about it. */
  attempt: number;
}

interface OutboxRow {
  seq: number;
  event_id: string;
  event_type: WebhookEventType;
  url: string;
  body: string;
  created_at: number;
  attempts: number;
}

const PENDING = 'delivered_at IS NULL AND gave_up_at IS NULL';

export interface FailedAttempt {
  /** The receiver's HTTP status, null when it gave none (refused, timed out). */
  status: number | null;
  error: string;
  /** When to try again; null gives the delivery up. */
  nextAttemptAt: number | null;
}

export class OutboxStore {
  constructor(private readonly db: Database) {}

  /**
   * One outbox row per receiver (WEBHOOK_URL, the job's callback_url, the MQTT broker, XProtect), with one event id: a
   * receiver de-duplicates by it. Written in `tx`, the transaction of the event's cause, so an
   * event exists exactly when its cause does. Nothing is written when there is no receiver.
   */
  async enqueue(tx: Tx, targets: WebhookTargets, event: WebhookEvent, at: number): Promise<number> {
    const urls = [...new Set([targets.webhookUrl, event.callbackUrl, targets.mqtt ? MQTT_RECEIVER : null].filter((u): u is string => !!u))];
    const milestone = targets.milestoneUrl && event.milestone ? { url: `${MILESTONE_RECEIVER}${targets.milestoneUrl}`, document: event.milestone } : null;
    if (urls.length === 0 && !milestone) return 0;
    const eventId = randomUUID();
    const body = JSON.stringify(event.body);
    for (const url of urls) await this.insert(tx, { eventId, eventType: event.type, url, body, createdAt: at });
    if (milestone) await this.insert(tx, { eventId, eventType: event.type, url: milestone.url, body: milestone.document(eventId), createdAt: at });
    return urls.length + (milestone ? 1 : 0);
  }

  /** A new delivery, due at once (in the transaction of the event's cause). */
  private async insert(tx: Tx, d: Omit<Delivery, 'seq' | 'attempt'>): Promise<void> {
    await tx.run(
      `INSERT INTO webhook_outbox (event_id, event_type, url, body, created_at, attempts, next_attempt_at)
       VALUES (?, ?, ?, ?, ?, 0, ?)`,
      d.eventId,
      d.eventType,
      d.url,
      d.body,
      d.createdAt,
      d.createdAt,
    );
  }

  /** Claims up to `limit` due deliveries, each the oldest pending one of its receiver, for `leaseMs`. */
  async claim(owner: string, leaseMs: number, limit: number, now = Date.now()): Promise<Delivery[]> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.all<OutboxRow>(
        `SELECT seq, event_id, event_type, url, body, created_at, attempts FROM webhook_outbox o
          WHERE ${PENDING} AND next_attempt_at <= ? AND COALESCE(lease_until, 0) < ?
            AND NOT EXISTS (SELECT 1 FROM webhook_outbox e WHERE e.url = o.url AND e.seq < o.seq AND e.delivered_at IS NULL AND e.gave_up_at IS NULL)
          ORDER BY seq LIMIT ?`,
        now,
        now,
        limit,
      );
      const claimed: Delivery[] = [];
      for (const row of rows) {
        const attempts = row.attempts;
        const taken = await tx.run(
          `UPDATE webhook_outbox SET attempts = attempts + 1, lease_owner = ?, lease_until = ?
            WHERE seq = ? AND attempts = ? AND ${PENDING} AND COALESCE(lease_until, 0) < ?`,
          owner,
          now + leaseMs,
          row.seq,
          attempts,
          now,
        );
        if (taken !== 1) continue;
        claimed.push({
          seq: row.seq,
          eventId: row.event_id,
          eventType: row.event_type,
          url: row.url,
          body: row.body,
          createdAt: row.created_at,
          attempt: attempts + 1,
        });
      }
      return claimed;
    });
  }

  /** A 2xx: the event is delivered, whichever attempt got it there (a late one of a lost lease too). */
  async markDelivered(d: Delivery, status: number, now = Date.now()): Promise<void> {
    await this.db.sql.run(
      `UPDATE webhook_outbox SET delivered_at = ?, last_status = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL
        WHERE seq = ? AND delivered_at IS NULL`,
      now,
      status,
      d.seq,
    );
  }

  /** Records a failed attempt; false when another attempt has taken the row meanwhile (its lease ran out). */
  async markFailed(d: Delivery, failure: FailedAttempt, now = Date.now()): Promise<boolean> {
    // Without a next attempt the delivery is given up now; with one, it is rescheduled.
    const set = failure.nextAttemptAt === null ? 'gave_up_at = ?' : 'next_attempt_at = ?';
    const changed = await this.db.sql.run(
      `UPDATE webhook_outbox SET ${set}, last_status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL
        WHERE seq = ? AND attempts = ? AND ${PENDING}`,
      failure.nextAttemptAt ?? now,
      failure.status,
      failure.error,
      d.seq,
      d.attempt,
    );
    return changed === 1;
  }

  /**
   * A node starting again lets go of the deliveries its last run held (`owner`; null: every lease,
   * for a store this process alone uses), so they go on at once rather than after their lease.
   */
  async release(owner: string | null): Promise<number> {
    return owner === null
      ? this.db.sql.run(`UPDATE webhook_outbox SET lease_until = NULL WHERE lease_until IS NOT NULL AND ${PENDING}`)
      : this.db.sql.run(`UPDATE webhook_outbox SET lease_until = NULL WHERE lease_owner = ? AND ${PENDING}`, owner);
  }

  /** Events not yet delivered nor given up, on every node (metrics). */
  /** Events waiting, for every receiver or for one. */
  async pendingCount(receiver?: string): Promise<number> {
    // Counted through the partial index of pending rows (webhook_outbox_due): delivered ones are not read.
    const row =
      receiver === undefined
        ? await this.db.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM webhook_outbox WHERE ${PENDING}`)
        : await this.db.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM webhook_outbox WHERE ${PENDING} AND url = ?`, receiver);
    return row?.n ?? 0;
  }

  /** A receiver that is back (the MQTT broker reconnected): its waiting events are due now, not at their backoff. */
  async dueNow(receiver: string, now = Date.now()): Promise<void> {
    await this.db.sql.run(`UPDATE webhook_outbox SET next_attempt_at = ? WHERE ${PENDING} AND url = ? AND next_attempt_at > ?`, now, receiver, now);
  }

  /** Deletes rows delivered or given up before `before`: their receivers have them or never will. */
  async purge(before: number): Promise<number> {
    return this.db.sql.run('DELETE FROM webhook_outbox WHERE delivered_at < ? OR gave_up_at < ?', before, before);
  }
}
