// Migrations both job stores share after their first ones: the same tables in each dialect's
// column types, so the two schemas cannot drift apart.

/** A dialect's names for an autoincrementing key and a 64-bit integer (times in ms). */
export interface ColumnTypes {
  serial: string;
  bigint: string;
}

/** Camera monitoring (lib/cameras/) and the webhook outbox (lib/webhooks/), in order. */
export function sharedMigrations(t: ColumnTypes): string[] {
  return [
    `CREATE TABLE cameras (
       id TEXT PRIMARY KEY,
       state TEXT NOT NULL,
       state_since ${t.bigint} NOT NULL,
       streak INTEGER NOT NULL DEFAULT 0,
       created_at ${t.bigint} NOT NULL,
       last_check_at ${t.bigint},
       last_job_id TEXT,
       last_probability INTEGER
     );
     CREATE TABLE camera_references (
       seq ${t.serial},
       id TEXT NOT NULL UNIQUE,
       camera TEXT NOT NULL,
       slot INTEGER NOT NULL,
       captured_at ${t.bigint} NOT NULL,
       minute_of_day INTEGER NOT NULL,
       source_job TEXT,
       file TEXT NOT NULL,
       width INTEGER NOT NULL,
       height INTEGER NOT NULL,
       created_at ${t.bigint} NOT NULL
     );
     CREATE INDEX camera_references_by_slot ON camera_references (camera, slot, seq);
     CREATE TABLE camera_checks (
       seq ${t.serial},
       camera TEXT NOT NULL,
       job_id TEXT NOT NULL,
       captured_at ${t.bigint} NOT NULL,
       finished_at ${t.bigint} NOT NULL,
       success INTEGER NOT NULL,
       probability INTEGER,
       state TEXT NOT NULL
     );
     CREATE INDEX camera_checks_by_camera ON camera_checks (camera, seq);
     CREATE TABLE webhook_outbox (
       seq ${t.serial},
       event_id TEXT NOT NULL,
       event_type TEXT NOT NULL,
       url TEXT NOT NULL,
       body TEXT NOT NULL,
       created_at ${t.bigint} NOT NULL,
       attempts INTEGER NOT NULL DEFAULT 0,
       next_attempt_at ${t.bigint} NOT NULL,
       lease_owner TEXT,
       lease_until ${t.bigint},
       delivered_at ${t.bigint},
       gave_up_at ${t.bigint},
       last_status INTEGER,
       last_error TEXT,
       UNIQUE (event_id, url)
     );
     CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND gave_up_at IS NULL;`,
    // A receiver's oldest pending delivery, looked up on every claim (lib/webhooks/deliveries.ts).
    `CREATE INDEX webhook_outbox_pending_by_url ON webhook_outbox (url, seq) WHERE delivered_at IS NULL AND gave_up_at IS NULL;`,
  ];
}
