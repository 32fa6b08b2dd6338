// The pictures of a camera over HTTP: their paths, and their signed links (the key that signs
// result links signs these: lib/http/result-links.ts), which open without credentials.
import type { Context } from 'koa';
import type { ResultLinks } from '../../http/result-links.js';

export const CAMERAS_PATH = '/cameras';
/** How long a picture's link (reference or capture) opens without the Basic header, at least. */
export const REFERENCE_LINK_TTL_MS = 24 * 60 * 60 * 1000;

/** Picture links expire on a whole hour (seconds): pictureLinks() rounds up to it. */
export const LINK_EXPIRY_STEP_S = 3600;

/** The path of a reference's picture: `/cameras/<camera>/references/<reference_id>`. */
export function referenceImagePath(camera: string, referenceId: string): string {
  return `${CAMERAS_PATH}/${encodeURIComponent(camera)}/references/${referenceId}`;
}

/** The path of a capture's picture: `/cameras/<camera>/captures/<capture_id>`. */
export function captureImagePath(camera: string, captureId: string): string {
  return `${CAMERAS_PATH}/${encodeURIComponent(camera)}/captures/${captureId}`;
}

/** The token of a picture link signs what the results' links sign a job id with. */
export const referenceLinkSubject = (referenceId: string) => `reference:${referenceId}`;
export const captureLinkSubject = (captureId: string) => `capture:${captureId}`;

/** A capture picture's id: its file's name without the extension. */
export const captureId = (file: string) => file.slice(file.lastIndexOf('/') + 1).replace(/\.[a-z]+$/, '');

/** The path of a picture's thumbnail: its own path and `/thumbnail` (signed as the picture is). */
export const thumbnailPath = (picturePath: string) => `${picturePath}/thumbnail`;

/** A GET of a camera's picture (a reference, its last capture) or its thumbnail with a valid, unexpired signature: it needs no credentials. */
export function signedPictureLink(ctx: Context, links: ResultLinks): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const m = new RegExp(`^${CAMERAS_PATH}/[^/]+/(references|captures)/([0-9a-f-]{36})(/thumbnail)?$`).exec(ctx.path);
  if (!m) return false;
  const { expires, sig } = ctx.query;
  if (typeof expires !== 'string' || Number(expires) * 1000 < Date.now()) return false;
  const subject = m[1] === 'references' ? referenceLinkSubject(m[2]) : captureLinkSubject(m[2]);
  return links.verify(subject, expires, typeof sig === 'string' ? sig : undefined);
}
