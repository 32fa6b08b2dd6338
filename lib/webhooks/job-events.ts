// `job.completed`: sent when a job's outcome is recorded, success or failure, to WEBHOOK_URL (and the MQTT broker) and
// to the job's own `callback_url`. Its body is the envelope GET /<analytic>/<job_id> answers for
// the finished job, so a receiver needs no second request and parses one format.
import type { JobRecord } from '../jobs/job-record.js';
import type { FinishHook } from '../jobs/store.js';
import type { WebhookEvent, WebhookTargets } from './outbox.js';
import type { OutboxStore } from './outbox-store.js';

/** A job as GET shows it (face logs: with their signed result links), from the HTTP face of its analytic. */
export type TaskView = (job: JobRecord) => Record<string, unknown>;

/** The job's `callback_url`, as its upload stored it. */
export function jobCallbackUrl(job: JobRecord): string | null {
  const url = job.input.callbackUrl;
  return typeof url === 'string' && url ? url : null;
}

export function jobCompletedEvent(job: JobRecord, view: TaskView): WebhookEvent {
  return { type: 'job.completed', body: { status: 'success', task: view(job) }, callbackUrl: jobCallbackUrl(job) };
}

/** Enqueues the job's `job.completed` in the transaction of its outcome; nothing without a receiver. */
export function webhookFinishHook(outbox: OutboxStore, targets: WebhookTargets, view: TaskView): FinishHook {
  return async (tx, job) => {
    if (!targets.webhookUrl && !targets.mqtt && !jobCallbackUrl(job)) return;
    await outbox.enqueue(tx, targets, jobCompletedEvent(job, view), job.finishedAt ?? Date.now());
  };
}
