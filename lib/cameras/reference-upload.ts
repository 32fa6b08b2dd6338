// An uploaded picture becoming a camera's reference: only JPEG and PNG (what a VMS snapshot is,
// and what the reference's link serves), moved into the references folder under a new name.
import fs from 'node:fs/promises';
import path from 'node:path';
import { unsupportedMedia } from '../http/errors.js';
import type { UploadedFile } from '../http/upload.js';
import type { MediaInfo } from '../video/probe.js';
import type { JobStore } from '../jobs/store.js';
import { addReference, type ReferenceRecord } from './camera-store.js';
import { newReferenceFile } from './reference-files.js';
import { minuteOfDay, slotOf } from './time-of-day.js';

export interface ReferenceUpload {
  camera: string;
  file: UploadedFile;
  media: MediaInfo;
  capturedAt: number;
  /** The check it came with; null when set by hand. */
  sourceJob: string | null;
}

export async function storeUploadedReference(dataDir: string, store: JobStore, slotMinutes: number, u: ReferenceUpload): Promise<ReferenceRecord> {
  if (u.media.kind !== 'image' || (u.media.format !== 'png' && u.media.format !== 'jpeg')) {
    throw unsupportedMedia('a camera reference must be a JPEG or PNG picture');
  }
  const target = newReferenceFile(dataDir, u.media.format === 'png' ? 'png' : 'jpg');
  await fs.rename(u.file.path, target.absolute);
  const ref: ReferenceRecord = {
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
  };
  try {
    await addReference(store, ref);
  } catch (err) {
    await fs.rm(target.absolute, { force: true });
    throw err;
  }
  return ref;
}

export function referencePath(dataDir: string, ref: Pick<ReferenceRecord, 'file'>): string {
  return path.join(dataDir, ref.file);
}
