// The cameras module's tables: each camera's alarm state, its references per time-of-day slot,
// its last checks, the checks accepted and not yet finished (what their outcome must change), and
// its state changes.
import type { Tx } from '../db/database.js';
import { ddl, type SchemaModule } from '../db/migrations.js';
import { unfinishedJobInputs } from '../jobs/store.js';

export const camerasSchema: SchemaModule = {
  name: 'cameras',
  // The single-version releases added these tables at SQLite's version 3 (PostgreSQL's 2).
  fromLegacy: (level) => (level >= 3 ? 1 : 0),
  steps: [
    ddl(
      (d) => `CREATE TABLE cameras (
         id TEXT PRIMARY KEY,
         state TEXT NOT NULL,
         state_since ${d.bigint} NOT NULL,
         streak INTEGER NOT NULL DEFAULT 0,
         created_at ${d.bigint} NOT NULL,
         last_check_at ${d.bigint},
         last_job_id TEXT,
         last_probability INTEGER
       );
       CREATE TABLE camera_references (
         seq ${d.serial},
         id TEXT NOT NULL UNIQUE,
         camera TEXT NOT NULL,
         slot INTEGER NOT NULL,
         captured_at ${d.bigint} NOT NULL,
         minute_of_day INTEGER NOT NULL,
         source_job TEXT,
         file TEXT NOT NULL,
         width INTEGER NOT NULL,
         height INTEGER NOT NULL,
         created_at ${d.bigint} NOT NULL
       );
       CREATE INDEX camera_references_by_slot ON camera_references (camera, slot, seq);
       CREATE TABLE camera_checks (
         seq ${d.serial},
         camera TEXT NOT NULL,
         job_id TEXT NOT NULL,
         captured_at ${d.bigint} NOT NULL,
         finished_at ${d.bigint} NOT NULL,
         success INTEGER NOT NULL,
         probability INTEGER,
         state TEXT NOT NULL
       );
       CREATE INDEX camera_checks_by_camera ON camera_checks (camera, seq);`,
    ),
    // A check's bookkeeping moves out of its job's input into a row of its own (written with the
    // job, read and deleted with its outcome); checks go with their job's record (retention).
    async (tx, d) => {
      await tx.exec(
        `CREATE TABLE camera_pending_checks (
           job_id TEXT PRIMARY KEY,
           camera TEXT NOT NULL,
           captured_at ${d.bigint} NOT NULL,
           width INTEGER NOT NULL,
           height INTEGER NOT NULL,
           refresh_id TEXT,
           refresh_file TEXT,
           refresh_slot INTEGER,
           refresh_minute_of_day INTEGER
         );
         CREATE INDEX camera_checks_by_job ON camera_checks (job_id);`,
      );
      await adoptPendingChecks(tx);
    },
    // Cameras the appliance checks itself (their stream sources are the sources module's table):
    // an `offline` state beside the checks' own (`checks_state` keeps theirs while offline), state
    // changes kept for the operators, and where each reference came from.
    ddl(
      (d) => `CREATE TABLE camera_state_changes (
         seq ${d.serial},
         camera TEXT NOT NULL,
         from_state TEXT NOT NULL,
         to_state TEXT NOT NULL,
         at ${d.bigint} NOT NULL,
         job_id TEXT,
         reason TEXT
       );
       CREATE INDEX camera_state_changes_by_camera ON camera_state_changes (camera, seq);
       ALTER TABLE cameras ADD COLUMN checks_state TEXT;
       ALTER TABLE cameras ADD COLUMN offline_reason TEXT;
       ALTER TABLE camera_references ADD COLUMN origin TEXT;
       ALTER TABLE camera_checks ADD COLUMN lateness_ms INTEGER;
       ALTER TABLE camera_checks ADD COLUMN wait_ms INTEGER;
       ALTER TABLE camera_pending_checks ADD COLUMN due_at ${d.bigint};
       ALTER TABLE camera_pending_checks ADD COLUMN capture_file TEXT;`,
    ),
    // Settings per camera (only those that differ from the defaults, as JSON), the operator's
    // acknowledgement of its alarm, an alarm held back while the camera is disarmed, and the
    // camera's history of settings, acknowledgements and resets.
    ddl(
      (d) => `ALTER TABLE cameras ADD COLUMN settings TEXT;
       ALTER TABLE cameras ADD COLUMN acknowledged_at ${d.bigint};
       ALTER TABLE cameras ADD COLUMN acknowledged_by TEXT;
       ALTER TABLE cameras ADD COLUMN acknowledge_comment TEXT;
       ALTER TABLE cameras ADD COLUMN alarm_held INTEGER NOT NULL DEFAULT 0;
       CREATE TABLE camera_history (
         seq ${d.serial},
         camera TEXT NOT NULL,
         at ${d.bigint} NOT NULL,
         kind TEXT NOT NULL,
         actor TEXT,
         detail TEXT
       );
       CREATE INDEX camera_history_by_camera ON camera_history (camera, seq);`,
    ),
  ],
};

/** Checks accepted by the release that kept their bookkeeping in the job's input, not finished yet. */
async function adoptPendingChecks(tx: Tx): Promise<void> {
  const rows = await unfinishedJobInputs(tx, 'kamcheck');
  for (const row of rows) {
    const input = JSON.parse(row.input) as {
      camera?: unknown;
      capturedAt?: unknown;
      referenceSize?: { width: number; height: number };
      refresh?: { id: string; file: string; slot: number; minuteOfDay: number };
    };
    if (typeof input.camera !== 'string' || typeof input.capturedAt !== 'number' || !input.referenceSize) continue;
    const r = input.refresh;
    await tx.run(
      `INSERT INTO camera_pending_checks (job_id, camera, captured_at, width, height, refresh_id, refresh_file, refresh_slot, refresh_minute_of_day)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      input.camera,
      input.capturedAt,
      input.referenceSize.width,
      input.referenceSize.height,
      r?.id ?? null,
      r?.file ?? null,
      r?.slot ?? null,
      r ? Math.floor(r.minuteOfDay) : null,
    );
  }
}
