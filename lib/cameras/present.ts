// The camera resources of the API (GET /cameras, GET /cameras/<camera>), built from the records.
import { httpDate } from '../http/task-view.js';
import type { CameraRecord, CheckRecord, ReferenceRecord } from './camera-store.js';
import { slotLabel } from './time-of-day.js';

export function presentCameraSummary(c: CameraRecord): Record<string, unknown> {
  return {
    camera: c.id,
    state: c.state,
    state_since: httpDate(c.stateSince),
    last_check: c.lastJobId
      ? { job_id: c.lastJobId, probability: c.lastProbability, finish_time: httpDate(c.lastCheckAt ?? c.stateSince) }
      : null,
    reference_count: c.referenceCount,
  };
}

/** A reference as a task and a camera show it. */
export function presentReference(r: Pick<ReferenceRecord, 'slot' | 'capturedAt' | 'sourceJob'>, slotMinutes: number): Record<string, unknown> {
  return { slot: slotLabel(r.slot, slotMinutes), captured_at: httpDate(r.capturedAt), source_job: r.sourceJob };
}

export function presentCameraDetail(
  c: CameraRecord,
  references: ReferenceRecord[],
  checks: CheckRecord[],
  slotMinutes: number,
  imageLink: (r: ReferenceRecord) => string,
): Record<string, unknown> {
  const slots = new Map<number, ReferenceRecord[]>();
  for (const r of references) slots.set(r.slot, [...(slots.get(r.slot) ?? []), r]);
  return {
    ...presentCameraSummary(c),
    alarm_streak: c.streak,
    references: [...slots.entries()]
      .sort(([a], [b]) => a - b)
      .map(([slot, refs]) => ({
        slot: slotLabel(slot, slotMinutes),
        // newest first: the first is the one checks use
        references: refs.map((r) => ({
          reference_id: r.id,
          ...presentReference(r, slotMinutes),
          width: r.width,
          height: r.height,
          created_at: httpDate(r.createdAt),
          image: imageLink(r),
        })),
      })),
    checks: checks.map((k) => ({
      job_id: k.jobId,
      captured_at: httpDate(k.capturedAt),
      finish_time: httpDate(k.finishedAt),
      success: k.success,
      probability: k.probability,
      state: k.state,
    })),
  };
}
