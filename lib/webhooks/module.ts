// The webhooks module: the outbox of events (schema.ts, outbox-store.ts), which the modules that
// announce something write in the transaction of its cause; their delivery, signed, with retries
// (dispatcher.ts); and the outbox's retention (the dispatcher's outboxDuty). It calls no other
// module; the jobs module's finish hook (job-events.ts) is registered by the composition root.
import type { Database } from '../db/database.js';
import type { ServiceModule } from '../service-module.js';
import { outboxDuty } from './dispatcher.js';
import { OutboxStore } from './outbox-store.js';
import { webhooksSchema } from './schema.js';

export const webhooksModule = {
  schema: webhooksSchema,
  openStore: (db: Database) => new OutboxStore(db),
  duties: (outbox: OutboxStore) => [outboxDuty(outbox)],
} satisfies ServiceModule;
