// Files the modules keep under DATA_DIR by a name of their own, never the client's (a camera id may
// be anything the VMS uses): `<folder>/<2 hex>/<uuid>.<ext>`. A module's rows name its current
// files; the module's retention removes the others once no queued check can still be reading them.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface DataFile {
  id: string;
  /** Relative to DATA_DIR, as rows store it. */
  file: string;
  absolute: string;
}

/** Small copies of pictures (lib/cameras/thumbnails.ts): DATA_DIR/thumbnails/<the picture's own path>, JPEG. */
export const THUMBNAILS_DIR = 'thumbnails';
/** 320 px: sharp on a card's 150-200 CSS px at twice the pixel density. */
export const THUMBNAIL_WIDTH = 320;

/** The thumbnail of a data file (relative to DATA_DIR, as rows store it), relative to DATA_DIR. */
export function thumbnailFile(file: string): string {
  return path.join(THUMBNAILS_DIR, file.replace(/\.[a-z]+$/, '.jpg'));
}

/** The thumbnail of a data file given by its absolute path `<DATA_DIR>/<folder>/<2 hex>/<name>`: where a worker, which knows only that path, writes it. */
export function thumbnailBeside(absolute: string): string {
  const parts = absolute.split(path.sep);
  const dataDir = parts.slice(0, -3).join(path.sep);
  return path.join(dataDir, thumbnailFile(parts.slice(-3).join(path.sep)));
}

/** A new file's place in `folder`; its shard folder is created unless whoever writes the file creates it. */
export function newDataFile(dataDir: string, folder: string, ext: string, createFolder: boolean): DataFile {
  const id = randomUUID();
  const file = path.join(folder, id.slice(0, 2), `${id}.${ext}`);
  const absolute = path.join(dataDir, file);
  if (createFolder) fs.mkdirSync(path.dirname(absolute), { recursive: true });
  return { id, file, absolute };
}

/** Removes the files of `folder` that `listed` does not name and that are older than `graceMs`; resolves with how many. */
export async function sweepUnlisted(dataDir: string, folder: string, listed: Set<string>, now: number, graceMs: number): Promise<number> {
  const root = path.join(dataDir, folder);
  let removed = 0;
  for (const shard of await fs.promises.readdir(root).catch(() => [] as string[])) {
    const dir = path.join(root, shard);
    for (const name of await fs.promises.readdir(dir).catch(() => [] as string[])) {
      const file = path.join(folder, shard, name);
      if (listed.has(file)) continue;
      const stat = await fs.promises.stat(path.join(dir, name)).catch(() => null);
      if (!stat || now - stat.mtimeMs < graceMs) continue;
      await fs.promises.rm(path.join(dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}
