// The webhooks module's table: the outbox of events to deliver, a row per event and receiver.
import { ddl, type SchemaModule } from '../db/migrations.js';

export const webhooksSchema: SchemaModule = {
  name: 'webhooks',
  // The single-version releases added the outbox at SQLite's version 3 and its second index at 4.
  fromLegacy: (level) => (level >= 4 ? 2 : level >= 3 ? 1 : 0),
  steps: [
    ddl(
      (d) => `CREATE TABLE webhook_outbox (
         seq ${d.serial},
         event_id TEXT NOT NULL,
         event_type TEXT NOT NULL,
         url TEXT NOT NULL,
         body TEXT NOT NULL,
         created_at ${d.bigint} NOT NULL,
         attempts INTEGER NOT NULL DEFAULT 0,
         next_attempt_at ${d.bigint} NOT NULL,
         lease_owner TEXT,
         lease_until ${d.bigint},
         delivered_at ${d.bigint},
         gave_up_at ${d.bigint},
         last_status INTEGER,
         last_error TEXT,
         UNIQUE (event_id, url)
       );
       CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND gave_up_at IS NULL;`,
    ),
    // A receiver's oldest pending delivery, looked up on every claim (deliveries.ts).
    ddl(() => `CREATE INDEX webhook_outbox_pending_by_url ON webhook_outbox (url, seq) WHERE delivered_at IS NULL AND gave_up_at IS NULL;`),
  ],
};
