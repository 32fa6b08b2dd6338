// The sessions module's table: the console's signed-in browsers (lib/sessions/sessions.ts). A
// row names its session by the SHA-256 of the cookie's token, so the table alone opens nothing.
import { ddl, type SchemaModule } from '../db/migrations.js';

export const sessionsSchema: SchemaModule = {
  name: 'sessions',
  steps: [
    ddl(
      (d) => `CREATE TABLE sessions (
         token_hash TEXT PRIMARY KEY,
         user_name TEXT NOT NULL,
         credential_tag TEXT NOT NULL,
         csrf_token TEXT NOT NULL,
         created_at ${d.bigint} NOT NULL,
         expires_at ${d.bigint} NOT NULL
       );
       CREATE INDEX sessions_by_expiry ON sessions (expires_at);`,
    ),
  ],
};
