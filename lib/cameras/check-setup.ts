// Setting up a tamper check of a camera, the one way both kinds of check take: a clip uploaded
// with a `camera` (POST /kamcheck) and a clip cut from the camera's stream (check-schedule.ts).
// It chooses the reference the worker compares with (the image sent with the check, else the
// camera's reference nearest in time of day among those of the clip's size), says where the
// worker writes the clip's renewal picture (the slot's renewed reference when the check finds
// nothing and the slot's reference is old enough, or the camera's first reference when a stream
// check finds none), and writes the check's bookkeeping (camera_pending_checks, read when its job
// finishes: check-outcome.ts) in the job's own transaction. A check that cannot be set up is refused with one wording per cause.
// Against a reference the appliance made itself, the check also names the slot's older one: an
// alarm is checked again against it (the second opinion, lib/kamcheck/run.ts), since a renewal's
// median keeps a light that lingered through its clip (docs/benchmarks.md, renewed references).
import type { Tx } from '../db/database.js';
import { httpDate } from '../dates.js';
import type { CameraStore } from './camera-store.js';
import type { PendingCheck, ReferenceRecord } from './camera-records.js';
import { presentReference } from './present.js';
import type { IgnoreArea } from './camera-settings.js';
import { newReferenceFile, referencePath } from './reference-files.js';
import { minuteOfDay, slotOf } from './time-of-day.js';
import { newCaptureFile } from '../sources/capture-files.js';
import { TAMPERED_AT } from './sensitivity.js';
import type { SecondOpinionInput } from '../kamcheck/analytic.js';

/** Why a check of a camera cannot be set up: the upload answers 422 with it, a stream check fails with it. */
export class CheckRefused extends Error {
  constructor(
    readonly code: 'no_reference' | 'resolution_mismatch',
    message: string,
  ) {
    super(message);
  }
}

export interface CheckRequest {
  jobId: string;
  camera: string;
  /** When the clip was captured, ms. */
  capturedAt: number;
  clip: { width: number; height: number };
  /** The image sent with the check, already in the references folder: it becomes the slot's reference. */
  uploaded: ReferenceRecord | null;
  /** A camera without a reference: a stream check learns one from its clip; an upload is refused. */
  whenNone: 'learn' | 'refuse';
  /** A check of the camera's stream: when it was due, and where its worker writes the capture's picture. */
  capture: { dueAt: number; file: string } | null;
}

/** The check's part of the tamper-check job's input (lib/kamcheck/analytic.ts). */
export interface CheckReference {
  imageName: string;
  /** The reference the worker compares with; absent when it learns one. */
  imagePath?: string;
  /** Where the worker writes the clip's renewal picture when the check returns under `refreshBelow`: the slot's renewed reference. */
  refreshPath?: string;
  /** With `refreshPath`: the probability under which the check renews (absent: 1, a check of 0). */
  refreshBelow?: number;
  /** Where the worker writes the clip's renewal picture as the camera's first reference. */
  learnPath?: string;
  /** The camera's settings that the analysis applies, when they differ from the defaults. */
  ignoreAreas?: IgnoreArea[];
  darkIsTamper?: false;
  /** Where the worker writes the clip's last frame: an uploaded clip's snapshot for XProtect. */
  picturePath?: string;
  /** Against a reference the appliance made itself, with an older one in its slot: what a check that alarms asks for a second opinion. */
  secondOpinion?: SecondOpinionInput;
}

export interface CameraCheck {
  reference: CheckReference;
  /** The task's fields from the start: the camera, when the clip was captured, the reference. */
  taskFields: Record<string, unknown>;
  pending: PendingCheck;
  /** Writes, in the job's transaction, what exists exactly when the job does: an uploaded reference, the pending check. */
  record(tx: Tx): Promise<void>;
}

export interface CheckSetupOptions {
  cameras: CameraStore;
  dataDir: string;
  /** REFERENCE_SLOT_MINUTES. */
  slotMinutes: number;
  /** MILESTONE_EVENT_URL is set: an uploaded clip of a camera whose events go there leaves a frame for them. */
  snapshots?: boolean;
}

/**
 * A check compared with another time of day's reference, its own slot having none yet, makes its
 * clip the slot's first reference when it returns under this rather than only at 0: a night
 * compared with the evening's or the day's picture keeps a little of the darkening it excuses. On
 * the held-out night draw (kamcheck-night-seed13, against day references) no night_dark clip
 * returns 0 (1-6, and two at 26 and 28), nor do 70-80% of the infrared, headlights, lamps and rain ones;
 * 116 of its 120 benign night clips return under 10. Of the 740 cases of that draw and the day
 * bench, 2 tampered clips do (spray mist at 1 and 7), which no alarm line catches either. Once
 * the slot has its own reference, only a check of 0 renews it, so a slow change is not learned.
 */
export const FIRST_OF_SLOT_BELOW = 10;

/**
 * A slot's own reference is renewed only from a clip captured this long after it: one a few
 * minutes old shows the scene as well, and a check that may renew keeps its 9 spread frames at
 * full size and, when it returns 0, pays for the median picture (bench-kamcheck-stages.js, 720p:
 * 31-34 ms of worker CPU against 11 for the quietest frame, of a 290 ms check). A camera checked
 * every minute renews each slot at most 4 times an hour.
 */
export const RENEW_AFTER_MS = 15 * 60_000;

export async function setUpCameraCheck(o: CheckSetupOptions, r: CheckRequest): Promise<CameraCheck> {
  const { cameras, dataDir, slotMinutes } = o;
  const slot = slotOf(r.capturedAt, slotMinutes);
  const minute = minuteOfDay(r.capturedAt);
  const taskFields: Record<string, unknown> = { camera: r.camera, captured_at: httpDate(r.capturedAt) };
  // Where the worker writes the clip's renewal picture, when it does: never over an uploaded reference.
  const target = r.uploaded ? null : newReferenceFile(dataDir, 'jpg');
  const pending: PendingCheck = {
    jobId: r.jobId,
    camera: r.camera,
    capturedAt: r.capturedAt,
    width: r.clip.width,
    height: r.clip.height,
    refresh: target ? { id: target.id, file: target.file, slot, minuteOfDay: minute } : null,
    capture: r.capture,
  };
  let reference: CheckReference;
  let older: { ref: ReferenceRecord; setAside: string } | null = null;
  if (r.uploaded) {
    reference = { imagePath: referencePath(dataDir, r.uploaded), imageName: `reference ${r.uploaded.id}` };
    taskFields.reference = presentReference(r.uploaded, slotMinutes);
  } else {
    const choice = await cameras.chooseReference(r.camera, minute, r.clip.width, r.clip.height);
    if ('found' in choice) {
      reference = { imagePath: referencePath(dataDir, choice.found), imageName: `reference ${choice.found.id}` };
      if (choice.found.slot !== slot) {
        reference.refreshPath = target!.absolute;
        reference.refreshBelow = FIRST_OF_SLOT_BELOW;
      } else if (r.capturedAt - choice.found.capturedAt >= RENEW_AFTER_MS) {
        reference.refreshPath = target!.absolute;
      } else {
        pending.refresh = null;
      }
      taskFields.reference = presentReference(choice.found, slotMinutes);
      if (choice.older) older = { ref: choice.older, setAside: choice.found.id };
    } else if ('otherSizes' in choice) {
      const sizes = choice.otherSizes.map((s) => `${s.width}x${s.height}`).join(', ');
      throw new CheckRefused(
        'resolution_mismatch',
        `the clip is ${r.clip.width}x${r.clip.height} but camera "${r.camera}" has references of ${sizes} only: set a reference of the clip's size (PUT /cameras/${r.camera}/reference, or POST /cameras/${r.camera}/reference/from_capture after a check of its stream)`,
      );
    } else if (r.whenNone === 'learn') {
      reference = { imageName: 'learned from the capture', learnPath: target!.absolute };
      taskFields.reference = { ...presentReference({ slot, capturedAt: r.capturedAt, sourceJob: r.jobId }, slotMinutes), learned: true };
    } else {
      throw new CheckRefused('no_reference', `camera "${r.camera}" has no reference yet: send an "image" with this check, or PUT /cameras/${r.camera}/reference`);
    }
  }
  // the settings column alone: the camera's row with its reference count costs a count per check
  const settings = await cameras.settingsOf(r.camera);
  if (settings.ignoreAreas.length > 0) reference.ignoreAreas = settings.ignoreAreas;
  if (!settings.darkIsTamper) reference.darkIsTamper = false;
  if (older) {
    const { ref, setAside } = older;
    reference.secondOpinion = { imagePath: referencePath(dataDir, ref), reference: presentReference(ref, slotMinutes), setAside, from: TAMPERED_AT[settings.sensitivity] };
  }
  if (!r.capture && o.snapshots && settings.milestone) {
    const snapshot = newCaptureFile(dataDir);
    reference.picturePath = snapshot.absolute;
    pending.snapshot = snapshot.file;
  }
  return {
    reference,
    taskFields,
    pending,
    record: async (tx) => {
      if (r.uploaded) await cameras.insertReference(tx, r.uploaded);
      await cameras.insertPendingCheck(tx, pending);
    },
  };
}
