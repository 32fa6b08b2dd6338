// Turning a validated upload into an accepted job: files move into the job's folder first, then
// the record is written, then it is queued. A crash before the record exists leaves only an
// orphan folder (removed at the next start), never a half job.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Tx } from '../../db/database.js';
import { DatabaseUnavailableError } from '../../db/errors.js';
import type { UploadedFile } from '../../http/upload.js';
import type { Analytic } from '../analytic.js';
import type { JobRecord } from '../job-record.js';
import { DuplicateSubmissionError, type IdempotencyKey } from '../store.js';
import { idempotencyKeyReused } from './idempotency.js';
import type { JobHttp } from './job-http.js';

export interface AcceptOptions {
  /**
   * What the service rather than the analytic keeps with the job (the task's fields from the
   * start, `taskFields`; a `callbackUrl`); the worker ignores it.
   */
  service?: Record<string, unknown>;
  id?: string;
  /** Written in the job's own transaction: what must exist exactly when the job does. */
  alongside?: (tx: Tx) => Promise<void>;
  /** Undoes what the route prepared for the job (a reference picture moved into place) when no job is created. */
  discard?: () => Promise<void>;
  /** The request's Idempotency-Key (idempotency.ts). */
  idempotencyKey?: IdempotencyKey | null;
}

/**
 * `makeInput` builds the job's input from where its files now are; the analytic checks it
 * (parseInput) before it is stored, as the worker does before it runs it. A submission whose
 * Idempotency-Key an earlier one holds creates nothing, and resolves with the earlier job.
 */
export async function acceptJob<Input>(
  deps: Pick<JobHttp, 'jobs' | 'queue' | 'jobsDir' | 'logger'>,
  analytic: Analytic<Input>,
  files: Record<string, UploadedFile>,
  makeInput: (paths: Record<string, string>, id: string) => Input,
  options: AcceptOptions = {},
): Promise<JobRecord> {
  const id = options.id ?? randomUUID();
  const inputDir = path.join(deps.jobsDir, id, 'input');
  const discard = async () => {
    // Not a job: its files go. (An insert whose answer was lost with the database connection may
    // have landed; its job then fails for want of input, and the client, told 503, sends it again.)
    await fs.rm(path.dirname(inputDir), { recursive: true, force: true });
    await options.discard?.();
  };
  let job: JobRecord;
  try {
    await fs.mkdir(inputDir, { recursive: true });
    const paths: Record<string, string> = {};
    for (const [field, file] of Object.entries(files)) {
      paths[field] = path.join(inputDir, field); // never the client's name: it is not a safe path
      await fs.rename(file.path, paths[field]);
    }
    await deps.queue.assertCapacity(); // again: other uploads may have been accepted meanwhile
    const input = { ...(analytic.parseInput(makeInput(paths, id)) as Record<string, unknown>), ...options.service };
    job = await deps.jobs.insert({ id, analytic: analytic.name, input }, { alongside: options.alongside, idempotencyKey: options.idempotencyKey ?? undefined });
  } catch (err) {
    await discard();
    if (err instanceof DuplicateSubmissionError) {
      const first = await deps.jobs.get(err.jobId);
      if (first && first.analytic !== analytic.name) throw idempotencyKeyReused(first);
      if (first) return first;
    }
    throw err;
  }
  deps.logger.info({ job_id: id, analytic: analytic.name }, 'job accepted');
  return job;
}

/**
 * The accepted job as it stands now, for the answer to its upload. When the database stops
 * answering after the job was stored, the record of its acceptance answers instead: a 503 would
 * make the client send the upload again, and the job would run twice.
 */
export async function acceptedTask(deps: Pick<JobHttp, 'jobs' | 'logger'>, job: JobRecord): Promise<JobRecord> {
  try {
    return (await deps.jobs.get(job.id)) ?? job;
  } catch (err) {
    if (!(err instanceof DatabaseUnavailableError)) throw err;
    deps.logger.warn({ job_id: job.id }, 'the database stopped answering after the job was accepted; answering with its accepted state');
    return job;
  }
}
