// What XProtect is told of a camera's change of state: the message its administrator defined for
// the new state, the camera as XProtect knows it (the camera's `milestone` setting), the causes
// in words, and the frame of the check that changed it.
import type { CameraRecord } from '../cameras/camera-records.js';
import { MILESTONE_MESSAGES, type MilestoneSource } from '../cameras/camera-settings.js';
import { analyticsEventXml } from './analytics-event.js';

/** The tamper check's causes (its result's `causes`, 0-100 each) in an operator's words. */
const CAUSE_WORDS: Record<string, string> = {
  blur: 'blurred or out of focus',
  moved: 'camera moved',
  masked: 'view masked or covered',
  exposure: 'over- or under-exposed',
  frozen: 'picture frozen',
  black: 'picture black',
};

export interface ChangeForMilestone {
  previous: CameraRecord['state'];
  after: CameraRecord;
  at: number;
  /** When a held alarm is announced (the camera was armed), later than `at`. */
  announcedAt?: number;
  jobId: string | null;
  reason: string | null;
  /** The check's causes, 0-100 each, when a check made the change. */
  causes: Record<string, number> | null;
  /** The probability from which a cause counts (the camera's sensitivity). */
  tamperedAt: number;
  snapshot: { jpeg: Buffer; width: number; height: number } | null;
}

export function milestoneEventXml(id: string, m: MilestoneSource, c: ChangeForMilestone): string {
  const state = c.after.state;
  return analyticsEventXml({
    id,
    at: c.announcedAt ?? c.at,
    startTime: c.at,
    message: m.messages[state] ?? MILESTONE_MESSAGES[state],
    type: 'Tamper check',
    description: describe(c),
    source: { name: m.sourceName, objectId: m.sourceObjectId },
    snapshot: c.snapshot,
    customData: {
      camera: c.after.id,
      state,
      previous_state: c.previous,
      job_id: c.jobId,
      probability: c.after.lastProbability,
      ...(c.causes ? { causes: c.causes } : {}),
      ...(c.reason ? { reason: c.reason } : {}),
    },
  });
}

/** E.g. `Camera "gate" tampered (probability 97%): view masked or covered (97), blurred or out of focus (64).` */
export function describe(c: ChangeForMilestone): string {
  const camera = `Camera "${c.after.id}"`;
  const probability = c.after.lastProbability !== null ? ` (probability ${c.after.lastProbability}%)` : '';
  if (c.after.state === 'offline') return `${camera} offline: ${(c.reason ?? 'its stream gives no pictures').replace(/_/g, ' ')}.`;
  if (c.after.state === 'ok') {
    const back = c.previous === 'offline' ? 'its stream is back' : 'no tampering seen any more';
    return `${camera} OK${probability}: ${back}.`;
  }
  const ranked = Object.entries(c.causes ?? {}).sort((a, b) => b[1] - a[1]);
  // the causes past the camera's line, else the strongest one
  const shown = ranked.filter(([, v]) => v >= c.tamperedAt);
  const named = (shown.length > 0 ? shown : ranked.slice(0, 1)).map(([k, v]) => `${CAUSE_WORDS[k] ?? k} (${Math.round(v)})`);
  return `${camera} tampered${probability}${named.length > 0 ? `: ${named.join(', ')}` : ''}.`;
}
