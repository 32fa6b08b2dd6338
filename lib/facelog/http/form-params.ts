// The face log's form parameters, as SPEC fixes them: `start_frame` (integer >= 0, the first frame
// processed), `max_frames` (integer >= 0, 0 = all, counted from `start_frame`),
// `min_size` (integer pixels >= 30), `gender`, `track_thumbnails` and `blur` (True/False, also
// true/false/1/0: the original service's clients send blur as 0 or 1). Anything else is a 400
// naming the parameter.
import { invalidParameter } from '../../http/errors.js';
import { singleField, type Upload } from '../../http/upload.js';

export interface FaceLogParams {
  startFrame: number;
  maxFrames: number;
  minSize: number;
  gender: boolean;
  trackThumbnails: boolean;
  /** Blur the faces in the overlay outputs (output/blur.ts). */
  blur: boolean;
}

export const MIN_FACE_SIZE = 30;
/** Larger than any frame the appliance takes (8K is 7680 wide). */
const MAX_FACE_SIZE = 10_000;
/** A frame limit beyond any real video (over 2 years at 25 fps); larger values are typos. */
const MAX_FRAME_LIMIT = 2 ** 31 - 1;

export function parseFaceLogParams(upload: Upload): FaceLogParams {
  return {
    startFrame: integer(upload, 'start_frame', 0, 0, MAX_FRAME_LIMIT),
    maxFrames: integer(upload, 'max_frames', 0, 0, MAX_FRAME_LIMIT),
    minSize: integer(upload, 'min_size', MIN_FACE_SIZE, MIN_FACE_SIZE, MAX_FACE_SIZE),
    gender: boolean(upload, 'gender', false),
    trackThumbnails: boolean(upload, 'track_thumbnails', false),
    blur: boolean(upload, 'blur', false),
  };
}

function integer(upload: Upload, name: string, fallback: number, min: number, max: number): number {
  const raw = singleField(upload, name)?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw invalidParameter(`"${name}" must be a whole number from ${min} to ${max}, got "${show(raw)}"`);
  }
  return Number(raw);
}

function boolean(upload: Upload, name: string, fallback: boolean): boolean {
  const raw = singleField(upload, name)?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (/^(true|1)$/i.test(raw)) return true;
  if (/^(false|0)$/i.test(raw)) return false;
  throw invalidParameter(`"${name}" must be True or False, got "${show(raw)}"`);
}

/** The value as the client sent it, short and printable, for the error message. */
function show(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const printable = raw.replace(/[\u0000-\u001f\u007f]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}...` : printable;
}
