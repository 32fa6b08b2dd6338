// Persistent job records in SQLite (WAL). The single source of truth for a job's state: the
// queue writes it, HTTP reads it, and a restart resumes from it.
import Database from 'better-sqlite3';

export type JobState = 'queued' | 'processing' | 'done' | 'failed';

export interface JobFailure {
  code: string;
  message: string;
}

export interface JobRecord {
  id: string;
  analytic: string;
  state: JobState;
  /** Times a worker has started this job. */
  attempts: number;
  createdAt: number;
  finishedAt: number | null;
  /** Progress text while running; the completion text when done. */
  message: string;
  /** What the analytic needs: file paths, original names, parameters. */
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: JobFailure | null;
}

interface Row {
  id: string;
  analytic: string;
  state: JobState;
  attempts: number;
  created_at: number;
  finished_at: number | null;
  message: string;
  input: string;
  result: string | null;
  error: string | null;
}

export class JobStore {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        analytic TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        message TEXT NOT NULL,
        input TEXT NOT NULL,
        result TEXT,
        error TEXT
      );
      CREATE INDEX IF NOT EXISTS jobs_by_analytic ON jobs (analytic, seq DESC);
      CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (state) WHERE state IN ('queued', 'processing');
    `);
  }

  insert(job: { id: string; analytic: string; input: Record<string, unknown>; createdAt?: number }): JobRecord {
    this.db
      .prepare(
        `INSERT INTO jobs (id, analytic, state, attempts, created_at, message, input)
         VALUES (?, ?, 'queued', 0, ?, 'Queued', ?)`,
      )
      .run(job.id, job.analytic, job.createdAt ?? Date.now(), JSON.stringify(job.input));
    return this.get(job.id)!;
  }

  get(id: string): JobRecord | null {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** `limit` jobs of an analytic, newest first, after skipping the `offset` newest. */
  recent(analytic: string, limit: number, offset = 0): JobRecord[] {
    const rows = this.db
      .prepare('SELECT * FROM jobs WHERE analytic = ? ORDER BY seq DESC LIMIT ? OFFSET ?')
      .all(analytic, limit, offset) as Row[];
    return rows.map(fromRow);
  }

  /** Jobs accepted but not finished, oldest first: what a restart must run again. */
  unfinished(): JobRecord[] {
    const rows = this.db
      .prepare(`SELECT * FROM jobs WHERE state IN ('queued', 'processing') ORDER BY seq ASC`)
      .all() as Row[];
    return rows.map(fromRow);
  }

  /** A worker takes the job: counts the attempt before any work, so crash loops are bounded. */
  markProcessing(id: string, message: string): void {
    this.db
      .prepare(`UPDATE jobs SET state = 'processing', attempts = attempts + 1, message = ? WHERE id = ?`)
      .run(message, id);
  }

  /** Back to the queue (worker crashed, service stopping). */
  requeue(id: string, message: string): void {
    this.db.prepare(`UPDATE jobs SET state = 'queued', message = ? WHERE id = ?`).run(message, id);
  }

  setMessage(id: string, message: string): void {
    this.db.prepare(`UPDATE jobs SET message = ? WHERE id = ? AND state = 'processing'`).run(message, id);
  }

  complete(id: string, message: string, result: Record<string, unknown>, at = Date.now()): void {
    this.db
      .prepare(`UPDATE jobs SET state = 'done', message = ?, result = ?, error = NULL, finished_at = ? WHERE id = ?`)
      .run(message, JSON.stringify(result), at, id);
  }

  fail(id: string, failure: JobFailure, result: Record<string, unknown> | null = null, at = Date.now()): void {
    this.db
      .prepare(`UPDATE jobs SET state = 'failed', message = ?, error = ?, result = ?, finished_at = ? WHERE id = ?`)
      .run(failure.message, JSON.stringify(failure), result ? JSON.stringify(result) : null, at, id);
  }

  /** Jobs by analytic and state (metrics, health). */
  countsByState(): { analytic: string; state: JobState; count: number }[] {
    return this.db.prepare('SELECT analytic, state, COUNT(*) AS count FROM jobs GROUP BY analytic, state').all() as {
      analytic: string;
      state: JobState;
      count: number;
    }[];
  }

  /** Throws unless the database answers a query (health check). */
  ping(): void {
    this.db.prepare('SELECT 1').get();
  }

  close(): void {
    this.db.close();
  }
}

function fromRow(row: Row): JobRecord {
  return {
    id: row.id,
    analytic: row.analytic,
    state: row.state,
    attempts: row.attempts,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    message: row.message,
    input: JSON.parse(row.input),
    result: row.result ? JSON.parse(row.result) : null,
    error: row.error ? JSON.parse(row.error) : null,
  };
}
