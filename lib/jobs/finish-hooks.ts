// Several duties run when a job finishes (its webhook event, its camera's state): the store takes
// one hook (JobStore.onFinish), so they are composed into one. Each part runs under a savepoint of
// its own: a part that fails is undone alone and reported, the others' writes and the job's
// outcome still commit.
import { runFinishHook, type FinishHook, type JobRecord } from './store.js';

export function composeFinishHooks(parts: FinishHook[], onError: (err: unknown, job: JobRecord) => void): FinishHook {
  return async (tx, job) => {
    for (const part of parts) await runFinishHook(tx, job, part, onError);
  };
}
