// The audit module's table: who changed what, from where, when; sign-ins that succeeded or failed.
import { ddl, type SchemaModule } from '../db/migrations.js';

export const auditSchema: SchemaModule = {
  name: 'audit',
  steps: [
    ddl(
      (d) => `CREATE TABLE audit_events (
         id ${d.serial},
         at ${d.bigint} NOT NULL,
         actor TEXT NOT NULL,
         address TEXT NOT NULL,
         action TEXT NOT NULL,
         target TEXT NOT NULL,
         detail TEXT
       );
       CREATE INDEX audit_events_by_time ON audit_events (at);
       CREATE INDEX audit_events_by_actor ON audit_events (actor, id);
       CREATE INDEX audit_events_by_target ON audit_events (target, id);`,
    ),
  ],
};
