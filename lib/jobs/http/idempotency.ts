// `Idempotency-Key` on every POST that creates a job: a client that lost the answer to an upload
// sends it again with the same key, and the same key from the same user within
// IDEMPOTENCY_WINDOW_MS answers the first task (same job_id) and creates nothing. The key is
// looked up before the upload is read; two requests with one key racing past that look-up are
// told apart by the key's row, written in the job's own transaction (JobStore.insert).
import type { Context, Next } from 'koa';
import { ApiError, invalidParameter } from '../../http/errors.js';
import type { JobRecord } from '../job-record.js';
import { IDEMPOTENCY_WINDOW_MS } from '../retention.js';
import type { IdempotencyKey, JobStore } from '../store.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Printable ASCII without spaces at the ends, as the IETF draft and Stripe's API take them. */
const KEY_PATTERN = /^[\x21-\x7e][\x20-\x7e]{0,253}[\x21-\x7e]$|^[\x21-\x7e]$/;

/** The request's key, checked; null without the header. */
export function readIdempotencyKey(ctx: Context): IdempotencyKey | null {
  const raw = ctx.get(IDEMPOTENCY_HEADER);
  if (!raw) return null;
  if (!KEY_PATTERN.test(raw)) throw invalidParameter(`"${IDEMPOTENCY_HEADER}" must be 1 to 255 printable ASCII characters`);
  return { owner: String(ctx.state.user ?? ''), key: raw, since: Date.now() - IDEMPOTENCY_WINDOW_MS };
}

/**
 * Answers a repeated submission with its first task, before its upload is read; other requests
 * go on with the key in ctx.state.idempotencyKey. `present` shows the task as the route's own answer does.
 */
export function idempotentSubmission(deps: { jobs: JobStore }, analytic: string, present: (job: JobRecord, ctx: Context) => Record<string, unknown>) {
  return async (ctx: Context, next: Next) => {
    const key = readIdempotencyKey(ctx);
    if (key) {
      const first = await deps.jobs.jobOfIdempotencyKey(key);
      if (first) {
        answerFirst(ctx, analytic, first, present);
        return;
      }
      ctx.state.idempotencyKey = key;
    }
    await next();
  };
}

/** The answer to a submission whose key an earlier one holds. */
function answerFirst(ctx: Context, analytic: string, first: JobRecord, present: (job: JobRecord, ctx: Context) => Record<string, unknown>): void {
  if (first.analytic !== analytic) throw idempotencyKeyReused(first);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = { status: 'success', task: present(first, ctx) };
}

export const idempotencyKeyReused = (first: JobRecord) =>
  new ApiError(422, 'idempotency_key_reused', `this ${IDEMPOTENCY_HEADER} was used for a ${first.analytic} job (${first.id}) within the last 24 hours`);
