// A camera as GET /cameras/<camera> shows it, read from the stores, with signed links to its
// pictures; and what the camera list shows of each (the reference a check now would use).
import type { Context } from 'koa';
import { notFound } from '../../http/errors.js';
import type { SourceRecord } from '../../sources/source-store.js';
import type { CameraRecord, ReferenceRecord } from '../camera-records.js';
import { applianceTimeZone } from '../camera-settings.js';
import { armedAt } from '../check-outcome.js';
import { nearestInTimeOfDay, newestPerSlot } from '../reference-choice.js';
import { minuteOfDay } from '../time-of-day.js';
import type { CameraHttp } from './camera-http.js';
import { presentCameraDetail, type PictureLinks } from './camera-view.js';
import { captureId, captureImagePath, captureLinkSubject, LINK_EXPIRY_STEP_S, REFERENCE_LINK_TTL_MS, referenceImagePath, referenceLinkSubject, thumbnailPath } from './picture-links.js';

/** Signed links to pictures, valid REFERENCE_LINK_TTL_MS, under PUBLIC_BASE_URL or the request's own base. */
export function pictureLinks(deps: CameraHttp, ctx: Context): PictureLinks {
  const base = deps.config.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`;
  // Rounded up to the hour: a picture's link stays the same for an hour, so browsers cache it (the console polls).
  const expires = Math.ceil((Date.now() + REFERENCE_LINK_TTL_MS) / 1000 / LINK_EXPIRY_STEP_S) * LINK_EXPIRY_STEP_S;
  const signed = (path: string, subject: string) => `${base}${path}?expires=${expires}&sig=${deps.links.sign(subject, expires)}`;
  return {
    reference: (r) => signed(referenceImagePath(r.camera, r.id), referenceLinkSubject(r.id)),
    capture: (camera, file) => signed(captureImagePath(camera, captureId(file)), captureLinkSubject(captureId(file))),
    referenceThumbnail: (r) => signed(thumbnailPath(referenceImagePath(r.camera, r.id)), referenceLinkSubject(r.id)),
    captureThumbnail: (camera, file) => signed(thumbnailPath(captureImagePath(camera, captureId(file))), captureLinkSubject(captureId(file))),
  };
}

/** Every camera's references, by camera (slot order, newest first in a slot). */
export async function allCurrentReferences(deps: CameraHttp, cameras: string[] | null = null): Promise<Map<string, ReferenceRecord[]>> {
  const byCamera = new Map<string, ReferenceRecord[]>();
  const references = cameras === null ? await deps.cameras.references(null) : await deps.cameras.referencesOf(cameras);
  for (const r of references) {
    const list = byCamera.get(r.camera);
    if (list) list.push(r);
    else byCamera.set(r.camera, [r]);
  }
  return byCamera;
}

/** The reference a check now would use: of the newest per slot (of the last capture's size when known), the nearest in time of day. */
export function currentReference(refs: ReferenceRecord[], source: SourceRecord | null, now: number): ReferenceRecord | null {
  const newest = newestPerSlot(refs);
  const size = source?.picture;
  const sized = size ? newest.filter((r) => r.width === size.width && r.height === size.height) : [];
  return nearestInTimeOfDay(sized.length > 0 ? sized : newest, minuteOfDay(now));
}

/** History entries the camera's detail shows (GET /cameras/<camera>/history has them all). */
export const DETAIL_HISTORY = 10;

export type CameraDetail = (deps: CameraHttp, ctx: Context, camera: string) => Promise<Record<string, unknown>>;

export const cameraDetail: CameraDetail = async (deps, ctx, camera) => {
  const record: CameraRecord | null = await deps.cameras.get(camera);
  if (!record) throw notFound(`no camera ${camera}`);
  const [references, checks, source, history] = await Promise.all([
    deps.cameras.references(camera),
    deps.cameras.checks(camera),
    deps.sources.get(camera),
    deps.cameras.history(camera, DETAIL_HISTORY),
  ]);
  const now = Date.now();
  const view = { source, currentReference: currentReference(references, source, now) };
  const extras = {
    defaults: { alarmAfter: deps.config.alarmAfter, clearAfter: deps.config.clearAfter, timeZone: applianceTimeZone() },
    armedNow: armedAt(record.settings, now),
    history,
  };
  return presentCameraDetail(record, view, references, checks, deps.config.referenceSlotMinutes, pictureLinks(deps, ctx), extras);
};
