// multipart/form-data bodies built byte by byte, so that a request can be exactly as broken as
// a case needs: duplicated or missing fields, odd file names, a cut-off end.

export interface Part {
  /** The form field's name, as raw bytes or text. */
  name: string | Buffer;
  /** Present for a file part: its file name (raw bytes allowed: NUL, non-UTF-8). */
  filename?: string | Buffer;
  /** The part's Content-Type; file parts default to application/octet-stream. */
  type?: string | null;
  data: Buffer | string;
}

export const BOUNDARY = '----vaa-hostile-7f3c9a';

export function multipartBody(parts: Part[], opts: { boundary?: string; close?: boolean } = {}): Buffer {
  const boundary = opts.boundary ?? BOUNDARY;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = [Buffer.from('Content-Disposition: form-data; name="'), bytes(p.name), Buffer.from('"')];
    if (p.filename !== undefined) disposition.push(Buffer.from('; filename="'), bytes(p.filename), Buffer.from('"'));
    const type = p.type === undefined ? (p.filename !== undefined ? 'application/octet-stream' : null) : p.type;
    chunks.push(
      Buffer.from(`--${boundary}\r\n`),
      ...disposition,
      Buffer.from('\r\n'),
      Buffer.from(type ? `Content-Type: ${type}\r\n` : ''),
      Buffer.from('\r\n'),
      bytes(p.data),
      Buffer.from('\r\n'),
    );
  }
  if (opts.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export function multipartType(boundary = BOUNDARY): string {
  return `multipart/form-data; boundary=${boundary}`;
}

function bytes(x: string | Buffer): Buffer {
  return typeof x === 'string' ? Buffer.from(x, 'utf8') : x;
}
