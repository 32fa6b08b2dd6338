// Multipart uploads: streamed by formidable (via koa-body) into a private temporary folder per
// request, which is removed when the request ends, whatever happened. Handlers move the files
// they keep into the job's folder before that.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import type { Part } from 'formidable';
import { formatBytes } from '../bytes.js';
import { invalidParameter, payloadTooLarge } from './errors.js';
import { ServiceError } from '../errors.js';
import { parsePartDisposition } from './content-disposition.js';
import { InsufficientStorageError, type StorageGuard } from '../disk-space.js';
import { UploadSlots } from './upload-slots.js';

/** All form fields of a request together (files do not count): parameters are short. */
const MAX_FIELDS_BYTES = 1024 * 1024;

/** formidable's part, with the raw headers its multipart parser also gives it (not in its types). */
type FormPart = Part & { headers?: Record<string, string> };

export interface UploadedFile {
  /** Where formidable wrote it, inside the request's temporary folder. */
  path: string;
  /** The client's file name, cleaned for display (never used as a path). */
  name: string;
  size: number;
}

export interface Upload {
  files: Record<string, UploadedFile[]>;
  fields: Record<string, string[]>;
}

/**
 * Parses a multipart body into ctx.state.upload; 413 over `maxBytes` and 507 when the disk would
 * go below its free-space floor, both before reading when the length is declared (app.ts closes
 * the connection rather than drain a large unread body), and both checked again once it is on disk.
 * `admit` may refuse the request before its body is read (e.g. a full queue).
 */
export function multipartUpload(tmpRoot: string, maxBytes: number, storage?: StorageGuard, admit?: () => Promise<void>) {
  const slots = new UploadSlots();
  return async (ctx: Context, next: Next) => {
    const declared = Number(ctx.get('content-length') || 0);
    // Refused here, the body is not read: the error handler closes the connection if it is large.
    if (Number.isFinite(declared) && declared > maxBytes) throw payloadTooLarge(maxBytes);
    if (!ctx.is('multipart')) throw invalidParameter('the request body must be multipart/form-data');
    await admit?.();
    await storage?.assertRoomFor(Number.isFinite(declared) ? declared : 0);
    const dir = path.join(tmpRoot, randomUUID());
    await fs.mkdir(dir, { recursive: true });
    /** The form field being read, named when the fields' size limit is exceeded. */
    let field: string | undefined;
    try {
      const parse = koaBody({
        multipart: true,
        json: false,
        urlencoded: false,
        text: false,
        formidable: {
          uploadDir: dir,
          maxFileSize: maxBytes,
          maxTotalFileSize: maxBytes,
          maxFiles: 10,
          maxFields: 100,
          maxFieldsSize: MAX_FIELDS_BYTES,
          allowEmptyFiles: true,
          minFileSize: 0,
          keepExtensions: false,
          // RFC 7578: a part with a filename is a file whatever its Content-Type, or none (Python's
          // requests sends none); only parts without one are fields. formidable decides by the
          // Content-Type alone, so the part is told what it is before formidable sees it.
          onPart: (part: FormPart, handle: (part: Part) => void) => {
            const disposition = parsePartDisposition(part.headers?.['content-disposition'] ?? '');
            if (disposition.filename !== undefined) {
              part.originalFilename = disposition.filename;
              part.mimetype ||= 'application/octet-stream';
            } else {
              part.originalFilename = null;
              part.mimetype = null;
              field = part.name ?? undefined;
            }
            handle(part);
          },
        },
      });
      const release = await slots.acquire();
      try {
        await parse(ctx, async () => {});
      } catch (err) {
        throw uploadError(err as Error & { httpCode?: number }, maxBytes, field, storage);
      } finally {
        release();
      }
      ctx.state.upload = collect(ctx);
      await storage?.assertRoomFor(0); // the body is on disk now: is the floor still free?
      await next();
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  };
}

/** The one file sent under `field` (a duplicated field is a client error), or null. */
export function singleFile(upload: Upload, field: string): UploadedFile | null {
  const list = upload.files[field] ?? [];
  if (list.length > 1) throw invalidParameter(`the file field "${field}" was sent ${list.length} times`);
  return list[0] ?? null;
}

/** The one value of a form field, or undefined. */
export function singleField(upload: Upload, field: string): string | undefined {
  const list = upload.fields[field] ?? [];
  if (list.length > 1) throw invalidParameter(`the field "${field}" was sent ${list.length} times`);
  return list[0];
}

function collect(ctx: Context): Upload {
  const files: Record<string, UploadedFile[]> = {};
  const raw = (ctx.request as unknown as { files?: Record<string, unknown> }).files ?? {};
  for (const [field, value] of Object.entries(raw)) {
    const list = (Array.isArray(value) ? value : [value]) as {
      filepath: string;
      originalFilename?: string | null;
      size: number;
    }[];
    files[field] = list.map((f) => ({ path: f.filepath, name: cleanName(f.originalFilename), size: f.size }));
  }
  const fields: Record<string, string[]> = {};
  const body = ((ctx.request as unknown as { body?: Record<string, unknown> }).body ?? {}) as Record<string, unknown>;
  for (const [field, value] of Object.entries(body)) {
    fields[field] = (Array.isArray(value) ? value : [value]).map(String);
  }
  return { files, fields };
}

/** A display name: last path segment, printable characters only, bounded length. */
export function cleanName(name: string | null | undefined): string {
  const base = String(name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const printable = base.replace(/[\u0000-\u001f\u007f\ufffd]/g, '').trim();
  return printable.slice(0, 200) || 'upload';
}

/** formidable's codes for too many parts (FormidableError.js): a client error, not a size one. */
const TOO_MANY_PARTS = new Set([1007, 1015]);
/** formidable's code for form fields over maxFieldsSize: the field is at fault, not the upload. */
const FIELDS_TOO_LARGE = 1006;

function uploadError(
  err: Error & { httpCode?: number; code?: unknown },
  maxBytes: number,
  field: string | undefined,
  storage?: StorageGuard,
): Error {
  if (err instanceof ServiceError) return err;
  if (err.code === 'ENOSPC') return new InsufficientStorageError(0, storage?.minFreeBytes ?? 0, 0); // the disk filled up mid-upload
  if (typeof err.code === 'number' && TOO_MANY_PARTS.has(err.code)) {
    return invalidParameter(`too many form fields or files: ${err.message.replace(/^options\./, '')}`);
  }
  if (err.code === FIELDS_TOO_LARGE) {
    return invalidParameter(
      `the form field "${cleanName(field)}" is too large: form fields may hold ${formatBytes(MAX_FIELDS_BYTES)} in all (send files with a filename)`,
    );
  }
  if (err.httpCode === 413) return payloadTooLarge(maxBytes);
  return invalidParameter(`malformed multipart body: ${err.message}`);
}
