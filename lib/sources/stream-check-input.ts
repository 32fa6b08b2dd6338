// A stream check's job input (no OpenCV here: the job machinery reads it too). What is stored with
// the job names the camera and where the worker writes; the source URL (with its password) and the
// camera's references are added when a worker takes the job (lib/cameras/stream-check-dispatch.ts),
// so the stored record never holds the password and the check uses the references of that moment.
import { InvalidJobInputError, readFields } from '../jobs/input-fields.js';
import type { StoredReference } from './stream-check.js';

export interface StreamCheckInput {
  /** The check's own job (a reference learned from it names it). */
  jobId: string;
  camera: string;
  /** When the check was due (or asked for), ms. */
  dueAt: number;
  /** Where the capture's picture goes (absolute). */
  picturePath: string;
  /** The id and place (absolute) of a reference learned or renewed from the capture. */
  referenceId: string;
  referencePath: string;
  /** Added at dispatch. */
  resolved?: {
    url: string;
    timeoutMs: number;
    slotMinutes: number;
    /** The newest reference of each slot. */
    references: StoredReference[];
  };
}

export function parseStreamCheckInput(raw: unknown): StreamCheckInput {
  const input: StreamCheckInput = readFields(raw, { jobId: 'string', camera: 'string', dueAt: 'number', picturePath: 'string', referenceId: 'string', referencePath: 'string' });
  const resolved = (raw as { resolved?: unknown }).resolved;
  if (resolved !== undefined) {
    const r = readFields(resolved, { url: 'string', timeoutMs: 'number', slotMinutes: 'number' });
    const references = (resolved as { references?: unknown }).references;
    if (!Array.isArray(references)) throw new InvalidJobInputError(`the stream check's references are not a list`);
    input.resolved = { ...r, references: references as StoredReference[] };
  }
  return input;
}
