// What an uploaded file is, decided at the upload: an empty file or one ffprobe cannot read is a
// 415 that names the form field, and no job is made of it.
import { unsupportedMedia } from './errors.js';
import type { UploadedFile } from './upload.js';
import { MediaProbeError, probeMedia, type MediaInfo } from '../video/probe.js';

export async function probeUpload(file: UploadedFile, field: string): Promise<MediaInfo> {
  if (file.size === 0) throw unsupportedMedia(`"${field}" is an empty file`);
  try {
    return await probeMedia(file.path);
  } catch (err) {
    if (err instanceof MediaProbeError) throw unsupportedMedia(`"${field}" cannot be decoded: ${err.message}`);
    throw err;
  }
}
