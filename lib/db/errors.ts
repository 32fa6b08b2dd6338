// How the database layer fails in ways its callers act on.
import { ServiceError } from '../errors.js';

/** Seconds a client is told to wait before sending a request the database could not take. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database does not answer (PostgreSQL restarting, network cut). The client sends the request
 * again after DATABASE_RETRY_AFTER_SECONDS; a running job's writes are tried again (lib/jobs/queue.ts).
 */
export class DatabaseUnavailableError extends ServiceError {
  constructor(cause: unknown) {
    super('busy', 'the database is not reachable right now; retry later', {
      status: 503,
      expose: true,
      retryable: true,
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      cause,
    });
  }
}

/** A name one live process holds (Database.holdName): two nodes were started with one NODE_ID. */
export class NameTakenError extends Error {
  readonly code = 'name_taken';
}

/** The database was written by a newer release than this one. */
export class SchemaTooNewError extends Error {
  readonly code = 'schema_too_new';
}
