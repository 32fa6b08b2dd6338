// What a stream check's worker gets beside its stored input, read as the run starts (the queue's
// prepareInput): the source URL with its password, which the job record never holds, and the
// camera's references as they are then (a reference set while the check waited counts).
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { ServiceError } from '../errors.js';
import type { JobRecord } from '../jobs/store.js';
import type { StreamCheckInput } from '../sources/stream-check-input.js';
import type { StoredReference } from '../sources/stream-check.js';
import { cameraReferences } from './camera-store.js';
import { newestPerSlot } from './reference-choice.js';
import { referencePath } from './reference-upload.js';
import { getSource } from './source-store.js';

export function streamCheckInputs(db: Database, config: Pick<Config, 'dataDir' | 'sourceTimeoutMs' | 'referenceSlotMinutes'>) {
  return async (job: JobRecord): Promise<Record<string, unknown>> => {
    const stream = job.input.stream as StreamCheckInput | undefined;
    if (!stream || typeof stream !== 'object') return job.input;
    const source = await getSource(db, stream.camera);
    if (!source) throw new ServiceError('source_removed', `camera "${stream.camera}" has no stream source any more`, { status: 409, expose: true });
    const references: StoredReference[] = newestPerSlot(await cameraReferences(db, stream.camera)).map((r) => ({
      id: r.id,
      path: referencePath(config.dataDir, r),
      slot: r.slot,
      minuteOfDay: r.minuteOfDay,
      width: r.width,
      height: r.height,
      createdAt: r.createdAt,
      capturedAt: r.capturedAt,
      sourceJob: r.sourceJob,
    }));
    const resolved: StreamCheckInput['resolved'] = { url: source.url, timeoutMs: config.sourceTimeoutMs, slotMinutes: config.referenceSlotMinutes, references };
    return { ...job.input, stream: { ...stream, resolved } };
  };
}
