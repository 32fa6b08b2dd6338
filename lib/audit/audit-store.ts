// Every statement on the audit trail's table (schema.ts), and its retention duty.
import type { Database } from '../db/database.js';
import type { Duty } from '../duty-runner.js';

export interface AuditEvent {
  at: number;
  /** A user's name, `key:<id> (<name>)`, or for a sign-in the name presented. */
  actor: string;
  address: string;
  /** e.g. `user.created`, `camera.changed`, `sign_in.failed`. */
  action: string;
  /** What it was done to: `user:<name>`, `key:<id>`, `camera:<id>`. */
  target: string;
  /** Before and after for changes of settings, and what else the action says. */
  detail: Record<string, unknown> | null;
}

export interface AuditQuery {
  actor: string | null;
  target: string | null;
  page: number;
  perPage: number;
}

interface AuditRow {
  id: number;
  at: number;
  actor: string;
  address: string;
  action: string;
  target: string;
  detail: string | null;
}

export class AuditStore {
  constructor(private readonly db: Database) {}

  async record(e: AuditEvent): Promise<void> {
    await this.db.sql.run(
      'INSERT INTO audit_events (at, actor, address, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)',
      e.at,
      e.actor,
      e.address,
      e.action,
      e.target,
      e.detail === null ? null : JSON.stringify(e.detail),
    );
  }

  /** Newest first, with the count of all that match. */
  async page(q: AuditQuery): Promise<{ events: (AuditEvent & { id: number })[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.actor !== null) {
      where.push('actor = ?');
      params.push(q.actor);
    }
    if (q.target !== null) {
      where.push('target = ?');
      params.push(q.target);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = Number((await this.db.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM audit_events ${clause}`, ...params))!.n);
    const rows = await this.db.sql.all<AuditRow>(`SELECT * FROM audit_events ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`, ...params, q.perPage, (q.page - 1) * q.perPage);
    return {
      total,
      events: rows.map((r) => ({ id: Number(r.id), at: Number(r.at), actor: r.actor, address: r.address, action: r.action, target: r.target, detail: r.detail === null ? null : JSON.parse(r.detail) })),
    };
  }

  async deleteBefore(at: number): Promise<number> {
    return this.db.sql.run('DELETE FROM audit_events WHERE at < ?', at);
  }
}

/** The audit trail's retention (AUDIT_RETENTION_DAYS): `audit.retention`, daily. */
export function auditRetentionDuty(store: AuditStore, retentionMs: number, now: () => number = Date.now): Duty {
  return {
    name: 'audit.retention',
    intervalMs: 24 * 60 * 60 * 1000,
    atStart: true,
    run: async () => ({ deleted: await store.deleteBefore(now() - retentionMs) }),
  };
}
