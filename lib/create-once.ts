// Files several nodes may create at once in a shared DATA_DIR (the link secret, generated
// credentials): the content is written to a private temporary file and published with link(),
// which fails when the file exists, so every node reads the same complete content.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/** Creates `file` with `content` (mode 0600) unless it exists; returns what the file holds. */
export function createOnce(file: string, content: string): string {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return fs.readFileSync(file, 'utf8');
}
