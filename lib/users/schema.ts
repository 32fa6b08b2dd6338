// The users module's tables: named users with their roles (passwords as scrypt hashes), API keys
// (their secrets as SHA-256: 256 random bits need no slow hash), the failed sign-ins the
// throttle counts, and the addresses each user signed in from, which the per-user limit spares.
import { ddl, type SchemaModule } from '../db/migrations.js';

export const usersSchema: SchemaModule = {
  name: 'users',
  steps: [
    ddl(
      (d) => `CREATE TABLE users (
         name TEXT PRIMARY KEY,
         password_hash TEXT NOT NULL,
         role TEXT NOT NULL,
         cameras TEXT,
         created_at ${d.bigint} NOT NULL,
         password_changed_at ${d.bigint} NOT NULL
       );
       CREATE TABLE api_keys (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         secret_hash TEXT NOT NULL,
         role TEXT NOT NULL,
         cameras TEXT,
         created_by TEXT NOT NULL,
         created_at ${d.bigint} NOT NULL,
         expires_at ${d.bigint},
         last_used_at ${d.bigint}
       );
       CREATE TABLE sign_in_failures (
         id ${d.serial},
         scope TEXT NOT NULL,
         subject TEXT NOT NULL,
         at ${d.bigint} NOT NULL
       );
       CREATE INDEX sign_in_failures_by_subject ON sign_in_failures (scope, subject, at);
       CREATE INDEX sign_in_failures_by_age ON sign_in_failures (at);
       CREATE TABLE sign_in_addresses (
         user_name TEXT NOT NULL,
         address TEXT NOT NULL,
         last_at ${d.bigint} NOT NULL,
         PRIMARY KEY (user_name, address)
       );`,
    ),
  ],
};
