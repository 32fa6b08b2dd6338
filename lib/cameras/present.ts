// A camera as its events and tasks show it: its state in a `camera.state_changed` event, the
// reference a check uses in the check's task. The API's views of cameras are in http/camera-view.ts.
import { httpDate } from '../dates.js';
import type { CameraRecord, ReferenceRecord } from './camera-records.js';
import { slotLabel } from './time-of-day.js';

/** A camera as events show it: its state, without pictures. */
export function presentCameraSummary(c: CameraRecord): Record<string, unknown> {
  return {
    camera: c.id,
    state: c.state,
    state_since: httpDate(c.stateSince),
    offline_reason: c.offlineReason,
    last_check: c.lastJobId
      ? { job_id: c.lastJobId, probability: c.lastProbability, finish_time: httpDate(c.lastCheckAt ?? c.stateSince) }
      : null,
    reference_count: c.referenceCount,
    acknowledgement: c.acknowledgement
      ? { acknowledged_by: c.acknowledgement.by, acknowledged_at: httpDate(c.acknowledgement.at), comment: c.acknowledgement.comment }
      : null,
  };
}

/** A reference as a task and a camera show it. */
export function presentReference(r: Pick<ReferenceRecord, 'slot' | 'capturedAt' | 'sourceJob'>, slotMinutes: number): Record<string, unknown> {
  return { slot: slotLabel(r.slot, slotMinutes), captured_at: httpDate(r.capturedAt), source_job: r.sourceJob };
}
