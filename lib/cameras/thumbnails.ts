// Small pictures for the camera cards: a reference or capture picture scaled to THUMBNAIL_WIDTH,
// kept in DATA_DIR/thumbnails/ under the original's own relative path. A 640x480 reference of
// 150 KB gives a thumbnail of 10-17 KB, so a page of cards costs kilobytes, not megabytes. The
// worker writes one with every picture it writes (a capture, a renewed or learned reference:
// kamcheck/refresh.ts); for a picture set over HTTP, or one of an earlier release, ffmpeg (a child
// process, as every decode of the service's is) makes it on first request. The originals never
// change (a new reference or capture is a new file); a thumbnail whose original is gone goes
// with the hourly sweep (reference-files.ts).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { THUMBNAIL_WIDTH, THUMBNAILS_DIR, thumbnailFile } from '../data-files.js';

const run = promisify(execFile);
/** ffmpeg's JPEG quality scale (2 best, 31 worst): 5 keeps edges crisp at a tenth of the bytes. */
const THUMBNAIL_QUALITY = 5;

/** Thumbnails being made now, by original: two requests for one share the making. */
const making = new Map<string, Promise<string>>();

/** The absolute path of the thumbnail of `file` (relative to DATA_DIR), made when missing; rejects with ENOENT when the original is gone. */
export function thumbnailOf(dataDir: string, file: string): Promise<string> {
  const target = path.join(dataDir, thumbnailFile(file));
  if (fs.existsSync(target)) return Promise.resolve(target);
  let pending = making.get(target);
  if (!pending) {
    pending = make(path.join(dataDir, file), target).finally(() => making.delete(target));
    making.set(target, pending);
  }
  return pending;
}

async function make(original: string, target: string): Promise<string> {
  await fs.promises.access(original); // ENOENT for a picture that is gone
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  // written aside and renamed: a reader (another node on a shared DATA_DIR) sees a whole file or none
  const partial = `${target}.${process.pid}.partial.jpg`;
  try {
    await run('ffmpeg', ['-v', 'error', '-y', '-i', original, '-vf', `scale='min(${THUMBNAIL_WIDTH},iw)':-2`, '-q:v', String(THUMBNAIL_QUALITY), '-frames:v', '1', partial], {
      timeout: 20_000,
    });
    await fs.promises.rename(partial, target);
  } finally {
    await fs.promises.rm(partial, { force: true });
  }
  return target;
}

/** Removes the thumbnails whose original is gone (and partial ones older than `graceMs`); resolves with how many. */
export async function sweepThumbnails(dataDir: string, now = Date.now(), graceMs = 3600_000): Promise<number> {
  const root = path.join(dataDir, THUMBNAILS_DIR);
  let removed = 0;
  const entries = await fs.promises.readdir(root, { recursive: true, withFileTypes: true }).catch(() => [] as fs.Dirent[]);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const absolute = path.join(e.parentPath, e.name);
    const relative = path.relative(root, absolute);
    let gone: boolean;
    if (e.name.endsWith('.partial.jpg')) {
      const stat = await fs.promises.stat(absolute).catch(() => null);
      gone = stat !== null && now - stat.mtimeMs > graceMs;
    } else {
      const stem = relative.replace(/\.jpg$/, '');
      gone = !(fs.existsSync(path.join(dataDir, `${stem}.jpg`)) || fs.existsSync(path.join(dataDir, `${stem}.png`)));
    }
    if (gone) {
      await fs.promises.rm(absolute, { force: true });
      removed++;
    }
  }
  return removed;
}

/** Thumbnails one run of the duty makes at most: 300 ffmpeg starts of 170-190 ms each. */
export const THUMBNAILS_PER_RUN = 300;
export const THUMBNAILS_INTERVAL_MS = 5 * 60 * 1000;

/**
 * Makes the missing thumbnails of the pictures the camera list shows (every camera's newest
 * references and last capture), one at a time, at most THUMBNAILS_PER_RUN: after an upgrade the
 * pictures of the release before get theirs within minutes, not on an operator's first view.
 */
export async function makeMissingThumbnails(dataDir: string, pictures: string[], limit = THUMBNAILS_PER_RUN): Promise<number> {
  let made = 0;
  for (const file of pictures) {
    if (made >= limit) break;
    if (fs.existsSync(path.join(dataDir, thumbnailFile(file)))) continue;
    await thumbnailOf(dataDir, file).then(
      () => made++,
      () => {}, // a picture removed meanwhile; a bad one is tried again on request
    );
  }
  return made;
}
