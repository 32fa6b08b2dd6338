// The sources module's table: each camera's stream source and check schedule (source-store.ts).
import { ddl, type SchemaModule } from '../db/migrations.js';

export const sourcesSchema: SchemaModule = {
  name: 'sources',
  steps: [
    // The table came with the cameras module's third step in the release that added stream
    // sources; a database of that release has it already, and keeps it as it is.
    ddl(
      (d) => `CREATE TABLE IF NOT EXISTS camera_sources (
         camera TEXT PRIMARY KEY,
         url TEXT NOT NULL,
         interval_s INTEGER NOT NULL,
         enabled INTEGER NOT NULL,
         next_check_at ${d.bigint} NOT NULL,
         pending_job TEXT,
         capture_due ${d.bigint},
         capture_until ${d.bigint},
         failures INTEGER NOT NULL DEFAULT 0,
         last_capture_at ${d.bigint},
         last_capture_ok INTEGER,
         last_capture_reason TEXT,
         last_capture_job TEXT,
         capture_file TEXT,
         capture_at ${d.bigint},
         capture_width INTEGER,
         capture_height INTEGER,
         created_at ${d.bigint} NOT NULL,
         updated_at ${d.bigint} NOT NULL
       );
       CREATE INDEX IF NOT EXISTS camera_sources_due ON camera_sources (next_check_at) WHERE enabled = 1;
       CREATE INDEX IF NOT EXISTS camera_sources_capturing ON camera_sources (capture_until) WHERE capture_until IS NOT NULL;`,
    ),
  ],
};
