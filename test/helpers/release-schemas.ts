// Databases as earlier releases left them, frozen here so that each upgrade path stays tested
// after the code that wrote them has changed: the first release's SQLite file (no version), and
// the last release with one schema version for everything (SQLite user_version 4, PostgreSQL
// schema_version 3), whose statements are copied from lib/jobs/{sqlite,pg}-store.ts and
// lib/jobs/shared-migrations.ts as they were then. Never edit them.

/** The first release's jobs table; its files carry no user_version. */
export const FIRST_RELEASE_SQLITE = `
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
  CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (state) WHERE state IN ('queued', 'processing');`;

/** Cameras and the webhook outbox, in one dialect's column types (the release's sharedMigrations). */
function camerasAndOutbox(serial: string, bigint: string): string {
  return `CREATE TABLE cameras (
       id TEXT PRIMARY KEY,
       state TEXT NOT NULL,
       state_since ${bigint} NOT NULL,
       streak INTEGER NOT NULL DEFAULT 0,
       created_at ${bigint} NOT NULL,
       last_check_at ${bigint},
       last_job_id TEXT,
       last_probability INTEGER
     );
     CREATE TABLE camera_references (
       seq ${serial},
       id TEXT NOT NULL UNIQUE,
       camera TEXT NOT NULL,
       slot INTEGER NOT NULL,
       captured_at ${bigint} NOT NULL,
       minute_of_day INTEGER NOT NULL,
       source_job TEXT,
       file TEXT NOT NULL,
       width INTEGER NOT NULL,
       height INTEGER NOT NULL,
       created_at ${bigint} NOT NULL
     );
     CREATE INDEX camera_references_by_slot ON camera_references (camera, slot, seq);
     CREATE TABLE camera_checks (
       seq ${serial},
       camera TEXT NOT NULL,
       job_id TEXT NOT NULL,
       captured_at ${bigint} NOT NULL,
       finished_at ${bigint} NOT NULL,
       success INTEGER NOT NULL,
       probability INTEGER,
       state TEXT NOT NULL
     );
     CREATE INDEX camera_checks_by_camera ON camera_checks (camera, seq);
     CREATE TABLE webhook_outbox (
       seq ${serial},
       event_id TEXT NOT NULL,
       event_type TEXT NOT NULL,
       url TEXT NOT NULL,
       body TEXT NOT NULL,
       created_at ${bigint} NOT NULL,
       attempts INTEGER NOT NULL DEFAULT 0,
       next_attempt_at ${bigint} NOT NULL,
       lease_owner TEXT,
       lease_until ${bigint},
       delivered_at ${bigint},
       gave_up_at ${bigint},
       last_status INTEGER,
       last_error TEXT,
       UNIQUE (event_id, url)
     );
     CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND gave_up_at IS NULL;
     CREATE INDEX webhook_outbox_pending_by_url ON webhook_outbox (url, seq) WHERE delivered_at IS NULL AND gave_up_at IS NULL;`;
}

/** The SQLite file of the last single-version release: PRAGMA user_version = 4. */
export const SINGLE_VERSION_RELEASE_SQLITE = `${FIRST_RELEASE_SQLITE}
  ALTER TABLE jobs ADD COLUMN started_at INTEGER;
  ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
  ALTER TABLE jobs ADD COLUMN lease_until INTEGER;
  ${camerasAndOutbox('INTEGER PRIMARY KEY AUTOINCREMENT', 'INTEGER')}
  PRAGMA user_version = 4;`;

/** The PostgreSQL schema of the last single-version release: schema_version 3. */
export const SINGLE_VERSION_RELEASE_POSTGRES = `
  CREATE TABLE schema_version (version INTEGER NOT NULL);
  INSERT INTO schema_version (version) VALUES (3);
  CREATE TABLE jobs (
     seq BIGSERIAL PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     analytic TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     created_at BIGINT NOT NULL,
     started_at BIGINT,
     finished_at BIGINT,
     message TEXT NOT NULL,
     input TEXT NOT NULL,
     result TEXT,
     error TEXT,
     lease_owner TEXT,
     lease_until BIGINT
   );
   CREATE INDEX jobs_by_analytic ON jobs (analytic, seq DESC);
   CREATE INDEX jobs_unfinished ON jobs (seq) WHERE state IN ('queued', 'processing');
   ${camerasAndOutbox('BIGSERIAL PRIMARY KEY', 'BIGINT')}`;

/**
 * Rows such a release wrote, as statements both dialects run: finished and unfinished jobs of both
 * analytics, a camera with a reference and a check, a camera check still queued (its bookkeeping
 * in its input then), and an undelivered webhook event. `refreshFile` is where that check's
 * worker is to write the renewed reference, relative to DATA_DIR.
 */
export function singleVersionReleaseRows(refreshFile: string, refreshPath: string): string[] {
  const pendingInput = JSON.stringify({
    videoPath: '/data/jobs/pending-check/input/video',
    imagePath: '/data/references/aa/ref-1.jpg',
    videoName: 'lobby.mp4',
    imageName: 'reference ref-1',
    camera: 'lobby',
    capturedAt: 1_700_000_300_000,
    refresh: { id: 'ref-renewed', file: refreshFile, slot: 10, minuteOfDay: 605 },
    refreshPath,
    referenceSize: { width: 320, height: 240 },
    taskFields: { camera: 'lobby', captured_at: 'Tue, 14 Nov 2023 22:18:20 GMT', reference: { slot: '10:00-11:00' } },
  });
  return [
    `INSERT INTO jobs (id, analytic, state, attempts, created_at, started_at, finished_at, message, input, result, error, lease_owner, lease_until) VALUES
      ('done-1', 'face_log', 'done', 1, 1001, 1500, 2001, 'Found 1 sightings, 1 tracks, 9 faces', '{"videoPath":"b.mp4"}', '{"number_of_sightings":1}', NULL, 'node-a', NULL),
      ('failed-1', 'kamcheck', 'failed', 1, 1002, 1600, 2002, 'no', '{}', NULL, '{"code":"decode_failed","message":"no"}', 'node-a', NULL),
      ('check-1', 'kamcheck', 'done', 1, 1003, 1700, 2003, 'Tampering probability 0%', '{}', '{"probability":0}', NULL, 'node-a', NULL),
      ('running-1', 'face_log', 'processing', 1, 1004, 1800, NULL, 'Processing frame 3 of 25', '{"videoPath":"c.mp4"}', NULL, NULL, 'node-a', 999999),
      ('pending-check', 'kamcheck', 'queued', 0, 1005, NULL, NULL, 'Queued', '${pendingInput}', NULL, NULL, NULL, NULL)`,
    `INSERT INTO cameras (id, state, state_since, streak, created_at, last_check_at, last_job_id, last_probability) VALUES ('lobby', 'ok', 1000, 0, 1000, 2003, 'check-1', 0)`,
    `INSERT INTO camera_references (id, camera, slot, captured_at, minute_of_day, source_job, file, width, height, created_at) VALUES
      ('ref-1', 'lobby', 10, 900, 600, NULL, 'references/aa/ref-1.jpg', 320, 240, 900)`,
    `INSERT INTO camera_checks (camera, job_id, captured_at, finished_at, success, probability, state) VALUES ('lobby', 'check-1', 1003, 2003, 1, 0, 'ok')`,
    `INSERT INTO webhook_outbox (event_id, event_type, url, body, created_at, attempts, next_attempt_at) VALUES
      ('ev-1', 'job.completed', 'http://127.0.0.1:9/hook', '{"status":"success"}', 2003, 0, 2003)`,
  ];
}
