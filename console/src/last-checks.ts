// The causes of each camera's last check, read from its task once (GET /kamcheck/<job_id>) and
// kept by job id: a camera list polled every few seconds reads only the checks that are new.
import { apiGet } from './api.js';
import type { Causes, KamcheckTask } from './types.js';

const known = new Map<string, Causes | null>();
const pending = new Map<string, Promise<void>>();
/** Reads at once: a hundred new checks do not become a hundred requests at the same moment. */
const PARALLEL = 4;
let running = 0;
const waiting: (() => void)[] = [];

async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export const causesOf = (jobId: string): Causes | null | undefined => known.get(jobId);

/** Reads the causes of the jobs not read yet; resolves when all are known. */
export async function loadCauses(jobIds: string[]): Promise<void> {
  await Promise.all(
    jobIds.filter((id) => !known.has(id)).map((id) => {
      let p = pending.get(id);
      if (!p) {
        p = slot(() => apiGet<{ task: KamcheckTask }>(`/kamcheck/${encodeURIComponent(id)}`))
          .then((r) => void known.set(id, r.task.causes ?? null))
          .catch(() => void known.set(id, null)) // e.g. the record is past retention: no causes to show
          .finally(() => pending.delete(id));
        pending.set(id, p);
      }
      return p;
    }),
  );
}
