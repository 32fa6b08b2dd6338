// Multipart uploads: streamed by formidable (via koa-body) into a private temporary folder per
// request, which is removed when the request ends, whatever happened. Handlers move the files
// they keep into the job's folder before that.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { ApiError, invalidParameter, payloadTooLarge } from './errors.js';

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

/** Parses a multipart body into ctx.state.upload; 413 over `maxBytes`, before reading when the length is declared. */
export function multipartUpload(tmpRoot: string, maxBytes: number) {
  return async (ctx: Context, next: Next) => {
    const declared = Number(ctx.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      ctx.set('Connection', 'close');
      throw payloadTooLarge(maxBytes);
    }
    if (!ctx.is('multipart')) {
      throw invalidParameter('the request body must be multipart/form-data');
    }
    const dir = path.join(tmpRoot, randomUUID());
    await fs.mkdir(dir, { recursive: true });
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
          maxFieldsSize: 1024 * 1024,
          allowEmptyFiles: true,
          minFileSize: 0,
          keepExtensions: false,
        },
      });
      try {
        await parse(ctx, async () => {});
      } catch (err) {
        throw uploadError(err as Error & { httpCode?: number }, maxBytes);
      }
      ctx.state.upload = collect(ctx);
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

function uploadError(err: Error & { httpCode?: number }, maxBytes: number): Error {
  if (err instanceof ApiError) return err;
  if (err.httpCode === 413) return payloadTooLarge(maxBytes);
  return invalidParameter(`malformed multipart body: ${err.message}`);
}
