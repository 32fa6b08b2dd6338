// A camera's stream source and check schedule, every statement on camera_sources (the table is in
// schema.ts): the URL as given (password included: the capture needs it; every presentation
// redacts it), the interval, the next due time, the capture under way, and what the last capture
// gave. The cameras module calls it, in its own transactions where a write goes with a camera's.
import type { Database, Tx } from '../db/database.js';

export interface SourceRecord {
  camera: string;
  /** The stream URL as given, password included: never shown (redact.ts). */
  url: string;
  intervalS: number;
  enabled: boolean;
  /** When the next scheduled check is due, ms. */
  nextCheckAt: number;
  /** The last scheduled check's job: no other is scheduled while it is unfinished. */
  pendingJob: string | null;
  /** A capture under way: the due time it is for, and until when its node holds it. */
  capturing: { dueAt: number; until: number } | null;
  /** Consecutive captures that failed (OFFLINE_AFTER of them make the camera offline). */
  failures: number;
  /** The last capture's outcome; null before the first. */
  lastCapture: { at: number; ok: boolean; reason: string | null; jobId: string } | null;
  /** The last picture a capture gave (relative to DATA_DIR), for operators and re-baselining. */
  picture: { file: string; at: number; width: number; height: number } | null;
  createdAt: number;
  updatedAt: number;
}

interface SourceRow {
  camera: string;
  url: string;
  interval_s: number;
  enabled: number;
  next_check_at: number;
  pending_job: string | null;
  capture_due: number | null;
  capture_until: number | null;
  failures: number;
  last_capture_at: number | null;
  last_capture_ok: number | null;
  last_capture_reason: string | null;
  last_capture_job: string | null;
  capture_file: string | null;
  capture_at: number | null;
  capture_width: number | null;
  capture_height: number | null;
  created_at: number;
  updated_at: number;
}

function sourceFromRow(r: SourceRow): SourceRecord {
  return {
    camera: r.camera,
    url: r.url,
    intervalS: r.interval_s,
    enabled: r.enabled === 1,
    nextCheckAt: r.next_check_at,
    pendingJob: r.pending_job,
    capturing: r.capture_due !== null && r.capture_until !== null ? { dueAt: r.capture_due, until: r.capture_until } : null,
    failures: r.failures,
    lastCapture:
      r.last_capture_at === null || r.last_capture_job === null
        ? null
        : { at: r.last_capture_at, ok: r.last_capture_ok === 1, reason: r.last_capture_reason, jobId: r.last_capture_job },
    picture:
      r.capture_file && r.capture_at !== null
        ? { file: r.capture_file, at: r.capture_at, width: r.capture_width ?? 0, height: r.capture_height ?? 0 }
        : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface SourceSettings {
  url: string;
  intervalS: number;
  enabled: boolean;
}

export interface DueCheck {
  camera: string;
  /** When the check was due. */
  dueAt: number;
  intervalS: number;
  pendingJob: string | null;
  /** A capture whose node let its hold run out (it died): taken over, not a new due time. */
  stale: { until: number } | null;
  /** A capture of the camera is under way (its node's hold runs): this due time is skipped. */
  capturing: boolean;
}

/** The outcome of a capture, written with its check's outcome. */
export interface CaptureOutcome {
  at: number;
  ok: boolean;
  reason: string | null;
  jobId: string;
  failures: number;
  picture: SourceRecord['picture'];
}

export class SourceStore {
  constructor(private readonly db: Database) {}

  /** A camera's source (in `tx` when given). */
  async get(camera: string, tx: Tx = this.db.sql): Promise<SourceRecord | null> {
    const row = await tx.get<SourceRow>('SELECT * FROM camera_sources WHERE camera = ?', camera);
    return row ? sourceFromRow(row) : null;
  }

  /** Every camera's source, by camera. */
  async all(): Promise<Map<string, SourceRecord>> {
    const rows = await this.db.sql.all<SourceRow>('SELECT * FROM camera_sources');
    return new Map(rows.map((r) => [r.camera, sourceFromRow(r)]));
  }

  /** The sources of these cameras (a page of the camera list), by camera. */
  async of(cameras: string[]): Promise<Map<string, SourceRecord>> {
    if (cameras.length === 0) return new Map();
    const rows = await this.db.sql.all<SourceRow>(`SELECT * FROM camera_sources WHERE camera IN (${cameras.map(() => '?').join(', ')})`, ...cameras);
    return new Map(rows.map((r) => [r.camera, sourceFromRow(r)]));
  }

  /**
   * Writes a camera's source. A new source, a new URL, or checks switched back on are due at once;
   * a shorter interval brings the next check forward. A new URL forgets the old one's failures.
   */
  async put(tx: Tx, camera: string, s: SourceSettings, now: number): Promise<void> {
    const before = await this.get(camera, tx);
    if (!before) {
      await tx.run(
        `INSERT INTO camera_sources (camera, url, interval_s, enabled, next_check_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        camera,
        s.url,
        s.intervalS,
        s.enabled ? 1 : 0,
        now,
        now,
        now,
      );
      return;
    }
    const newUrl = s.url !== before.url;
    const dueNow = newUrl || (s.enabled && !before.enabled);
    const next = dueNow ? now : Math.min(before.nextCheckAt, now + s.intervalS * 1000);
    await tx.run(
      `UPDATE camera_sources SET url = ?, interval_s = ?, enabled = ?, next_check_at = ?, failures = ?, updated_at = ? WHERE camera = ?`,
      s.url,
      s.intervalS,
      s.enabled ? 1 : 0,
      next,
      newUrl ? 0 : before.failures,
      now,
      camera,
    );
  }

  /** Removes a camera's source; false when it had none. */
  async remove(tx: Tx, camera: string): Promise<boolean> {
    return (await tx.run('DELETE FROM camera_sources WHERE camera = ?', camera)) === 1;
  }

  /**
   * What is to do at `now`, most overdue first: enabled sources due and not being captured, and
   * captures whose node's hold ran out.
   */
  async due(now: number, limit: number): Promise<DueCheck[]> {
    const rows = await this.db.sql.all<Pick<SourceRow, 'camera' | 'next_check_at' | 'interval_s' | 'pending_job' | 'capture_due' | 'capture_until'>>(
      `SELECT camera, next_check_at, interval_s, pending_job, capture_due, capture_until FROM camera_sources
        WHERE (enabled = 1 AND next_check_at <= ?) OR capture_until < ?
        ORDER BY COALESCE(capture_due, next_check_at) LIMIT ${Math.floor(limit)}`,
      now,
      now,
    );
    return rows.map((r) => {
      const stale = r.capture_until !== null && r.capture_until < now;
      return {
        camera: r.camera,
        dueAt: stale ? r.capture_due! : r.next_check_at,
        intervalS: r.interval_s,
        pendingJob: r.pending_job,
        stale: stale ? { until: r.capture_until! } : null,
        capturing: r.capture_until !== null && !stale,
      };
    });
  }

  /** The earliest due time of an enabled source, or null when none. */
  async earliestDue(): Promise<number | null> {
    const row = await this.db.sql.get<{ t: number | null }>('SELECT MIN(next_check_at) AS t FROM camera_sources WHERE enabled = 1');
    return row?.t ?? null;
  }

  /**
   * Takes the check due at `dueAt` for this node's capture, held until `until`: moves the schedule
   * on to `next`, only if nobody took it first (the due time is still `dueAt`) and no capture of
   * the camera is under way. Nodes that race for one due check compare-and-set the same row: one
   * wins, on PostgreSQL and SQLite alike.
   */
  async takeDue(camera: string, dueAt: number, next: number, until: number): Promise<boolean> {
    const taken = await this.db.sql.run(
      `UPDATE camera_sources SET next_check_at = ?, capture_due = ?, capture_until = ?
        WHERE camera = ? AND enabled = 1 AND next_check_at = ? AND capture_until IS NULL`,
      next,
      dueAt,
      until,
      camera,
      dueAt,
    );
    return taken === 1;
  }

  /** Takes over a capture whose node's hold (`until`) ran out, now held until `newUntil`. */
  async retakeCapture(camera: string, dueAt: number, until: number, newUntil: number): Promise<boolean> {
    const taken = await this.db.sql.run(`UPDATE camera_sources SET capture_until = ? WHERE camera = ? AND capture_due = ? AND capture_until = ?`, newUntil, camera, dueAt, until);
    return taken === 1;
  }

  /** Lets a due check go without a capture (the camera's last check still runs, or the queue is full). */
  async skipDue(camera: string, dueAt: number, next: number): Promise<boolean> {
    return (await this.db.sql.run(`UPDATE camera_sources SET next_check_at = ? WHERE camera = ? AND next_check_at = ?`, next, camera, dueAt)) === 1;
  }

  /** Ends this node's hold of a capture as its check's job is written; false when the hold was lost (taken over). */
  async endCapture(tx: Tx, camera: string, dueAt: number, until: number, jobId: string): Promise<boolean> {
    const ended = await tx.run(
      `UPDATE camera_sources SET capture_due = NULL, capture_until = NULL, pending_job = ? WHERE camera = ? AND capture_due = ? AND capture_until = ?`,
      jobId,
      camera,
      dueAt,
      until,
    );
    return ended === 1;
  }

  /** Records what a capture gave, in the transaction of its check's outcome. */
  async recordCapture(tx: Tx, camera: string, c: CaptureOutcome): Promise<void> {
    await tx.run(
      `UPDATE camera_sources SET last_capture_at = ?, last_capture_ok = ?, last_capture_reason = ?, last_capture_job = ?, failures = ? WHERE camera = ?`,
      c.at,
      c.ok ? 1 : 0,
      c.reason,
      c.jobId,
      c.failures,
      camera,
    );
    if (c.picture) {
      await tx.run(
        `UPDATE camera_sources SET capture_file = ?, capture_at = ?, capture_width = ?, capture_height = ? WHERE camera = ?`,
        c.picture.file,
        c.picture.at,
        c.picture.width,
        c.picture.height,
        camera,
      );
    }
  }

  /** The capture pictures rows name (the sweep of unlisted files). */
  async listedCaptureFiles(): Promise<Set<string>> {
    return new Set((await this.db.sql.all<{ capture_file: string }>('SELECT capture_file FROM camera_sources WHERE capture_file IS NOT NULL')).map((r) => r.capture_file));
  }
}

/** When the check after one due at `dueAt` is due: the schedule's next step after `now` (missed steps are skipped, the phase kept). */
export function followingDue(dueAt: number, intervalS: number, now: number): number {
  const step = intervalS * 1000;
  return dueAt + step * Math.max(1, Math.ceil((now - dueAt + 1) / step));
}
