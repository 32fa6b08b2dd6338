// The camera resources of the API (GET /cameras, GET /cameras/<camera>, its state changes), built
// from the records. Stream URLs are shown with their password replaced; pictures are signed links.
import { httpDate } from '../../dates.js';
import { redactSourceUrl } from '../../sources/redact.js';
import type { SourceRecord } from '../../sources/source-store.js';
import type { CameraRecord, CheckRecord, HistoryEntry, ReferenceRecord, StateChange } from '../camera-records.js';
import { presentSettings, type SettingDefaults } from '../camera-settings.js';
import { presentCameraSummary, presentReference } from '../present.js';
import { TAMPERED_AT } from '../sensitivity.js';
import { slotLabel } from '../time-of-day.js';

/** Signed links to a camera's pictures. */
export interface PictureLinks {
  reference(r: ReferenceRecord): string;
  capture(camera: string, file: string): string;
  referenceThumbnail(r: ReferenceRecord): string;
  captureThumbnail(camera: string, file: string): string;
}

/** What the camera list and the camera show beside the summary. */
export interface CameraView {
  source: SourceRecord | null;
  /** The reference the next check would use (nearest in time of day now), or null. */
  currentReference: ReferenceRecord | null;
}

/** A camera as GET /cameras lists it: the summary, its stream source and its pictures. */
export function presentCamera(c: CameraRecord, view: CameraView, links: PictureLinks): Record<string, unknown> {
  return {
    ...presentCameraSummary(c),
    // the line its sensitivity draws: a list shows a probability as high against it
    tampered_at: TAMPERED_AT[c.settings.sensitivity],
    reference_image: view.currentReference ? links.reference(view.currentReference) : null,
    reference_thumbnail: view.currentReference ? links.referenceThumbnail(view.currentReference) : null,
    source: view.source ? presentSource(c, view.source, links) : null,
  };
}

export function presentSource(c: CameraRecord, s: SourceRecord, links: PictureLinks): Record<string, unknown> {
  const picture = s.picture
    ? {
        captured_at: httpDate(s.picture.at),
        width: s.picture.width,
        height: s.picture.height,
        image: links.capture(c.id, s.picture.file),
        thumbnail: links.captureThumbnail(c.id, s.picture.file),
      }
    : null;
  const last = s.lastCapture;
  return {
    url: redactSourceUrl(s.url),
    check_interval_s: s.intervalS,
    enabled: s.enabled,
    next_check_at: s.enabled ? httpDate(s.nextCheckAt) : null,
    last_capture: last
      ? {
          at: httpDate(last.at),
          outcome: last.ok ? 'ok' : 'failed',
          reason: last.reason,
          job_id: last.jobId,
          image: last.ok && picture && s.picture!.at === last.at ? picture.image : null,
        }
      : null,
    picture,
    offline_reason: c.offlineReason,
  };
}

/** What the camera's detail shows beside its records: its settings' defaults, whether it is armed now, its history. */
export interface CameraDetailExtras {
  defaults: SettingDefaults;
  armedNow: boolean;
  history: HistoryEntry[];
}

export function presentCameraDetail(
  c: CameraRecord,
  view: CameraView,
  references: ReferenceRecord[],
  checks: CheckRecord[],
  slotMinutes: number,
  links: PictureLinks,
  extras: CameraDetailExtras,
): Record<string, unknown> {
  const slots = new Map<number, ReferenceRecord[]>();
  for (const r of references) slots.set(r.slot, [...(slots.get(r.slot) ?? []), r]);
  return {
    ...presentCamera(c, view, links),
    alarm_streak: c.streak,
    settings: presentSettings(c.settings, extras.defaults),
    armed_now: extras.armedNow,
    alarm_held: c.alarmHeld,
    history: extras.history.map(presentHistoryEntry),
    references: [...slots.entries()]
      .sort(([a], [b]) => a - b)
      .map(([slot, refs]) => ({
        slot: slotLabel(slot, slotMinutes),
        // newest first: the first is the one checks use
        references: refs.map((r) => ({
          reference_id: r.id,
          ...presentReference(r, slotMinutes),
          origin: r.origin ?? null,
          width: r.width,
          height: r.height,
          created_at: httpDate(r.createdAt),
          image: links.reference(r),
        })),
      })),
    checks: checks.map((k) => ({
      job_id: k.jobId,
      captured_at: httpDate(k.capturedAt),
      finish_time: httpDate(k.finishedAt),
      success: k.success,
      probability: k.probability,
      state: k.state,
      ...(k.latenessMs !== null ? { lateness_s: Math.round(k.latenessMs) / 1000 } : {}),
      ...(k.waitMs !== null && k.waitMs !== undefined ? { wait_s: Math.round(k.waitMs) / 1000 } : {}),
    })),
  };
}

export function presentHistoryEntry(h: HistoryEntry): Record<string, unknown> {
  return { at: httpDate(h.at), kind: h.kind, by: h.actor, ...h.detail };
}

export function presentStateChange(s: StateChange): Record<string, unknown> {
  return { from: s.from, to: s.to, at: httpDate(s.at), job_id: s.jobId, reason: s.reason };
}
