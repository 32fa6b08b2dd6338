// An uploaded picture becoming a camera's reference: only JPEG and PNG (what a VMS snapshot is,
// and what the reference's link serves), moved into the references folder under a new name.
import fs from 'node:fs/promises';
import { thumbnailOf } from '../thumbnails.js';
import { unsupportedMedia } from '../../http/errors.js';
import type { UploadedFile } from '../../http/upload.js';
import type { MediaInfo } from '../../video/probe.js';
import type { ReferenceRecord } from '../camera-records.js';
import type { CameraStore } from '../camera-store.js';
import { newReferenceFile, referencePath } from '../reference-files.js';
import { minuteOfDay, slotOf } from '../time-of-day.js';

export interface ReferenceUpload {
  camera: string;
  file: UploadedFile;
  media: MediaInfo;
  capturedAt: number;
  /** The check it came with; null when set by hand. */
  sourceJob: string | null;
}

/**
 * Moves the picture into the references folder and describes the reference it is to become; the
 * caller records it (insertReference) or, when it does not, removes the file (discardReference).
 */
export async function placeUploadedReference(dataDir: string, slotMinutes: number, u: ReferenceUpload): Promise<ReferenceRecord> {
  if (u.media.kind !== 'image' || (u.media.format !== 'png' && u.media.format !== 'jpeg')) {
    throw unsupportedMedia('a camera reference must be a JPEG or PNG picture');
  }
  const target = newReferenceFile(dataDir, u.media.format === 'png' ? 'png' : 'jpg');
  await fs.rename(u.file.path, target.absolute);
  return {
    id: target.id,
    camera: u.camera,
    slot: slotOf(u.capturedAt, slotMinutes),
    capturedAt: u.capturedAt,
    minuteOfDay: minuteOfDay(u.capturedAt),
    sourceJob: u.sourceJob,
    file: target.file,
    width: u.media.width,
    height: u.media.height,
    createdAt: Date.now(),
    origin: 'uploaded',
  };
}

/** A reference set on its own (PUT /cameras/<camera>/reference): recorded now, or its file removed. */
export async function storeUploadedReference(dataDir: string, cameras: CameraStore, slotMinutes: number, u: ReferenceUpload): Promise<ReferenceRecord> {
  const ref = await placeUploadedReference(dataDir, slotMinutes, u);
  try {
    await cameras.addReference(ref);
  } catch (err) {
    await discardReference(dataDir, ref);
    throw err;
  }
  // the camera list's small copy, made now rather than when an operator first opens the list
  void thumbnailOf(dataDir, ref.file).catch(() => {}); // made on request instead
  return ref;
}

/** The file of a reference that was not recorded. */
export async function discardReference(dataDir: string, ref: Pick<ReferenceRecord, 'file'>): Promise<void> {
  await fs.rm(referencePath(dataDir, ref), { force: true });
}
