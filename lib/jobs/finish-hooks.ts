// Several duties run when a job finishes (its webhook event, its camera's state): the store takes
// one hook (JobStore.onFinish), so they are composed into one. Each part runs under a savepoint of
// its own: a part that fails is undone alone and reported, the others' writes and the job's
// outcome still commit.
import type { FinishHook, JobRecord } from './store.js';

export function composeFinishHooks(parts: FinishHook[], onError: (err: unknown, job: JobRecord) => void): FinishHook {
  return async (tx, job) => {
    for (const part of parts) {
      await tx.run('SAVEPOINT finish_hook_part');
      try {
        await part(tx, job);
        await tx.run('RELEASE SAVEPOINT finish_hook_part');
      } catch (err) {
        // A lost connection fails this too: the transaction, and the outcome with it, is then retried.
        await tx.run('ROLLBACK TO SAVEPOINT finish_hook_part');
        await tx.run('RELEASE SAVEPOINT finish_hook_part');
        onError(err, job);
      }
    }
  };
}
