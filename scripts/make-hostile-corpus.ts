// Writes the bad-input corpus (testkit/hostile-corpus/cases.ts) as raw HTTP requests, one file
// per case, plus manifest.json with what each must be answered. Replay one against a service:
//   nc HOST 8080 < 012-kamcheck-truncated-MP4.http
// Usage: node build/scripts/make-hostile-corpus.js [--auth user:password] [--max-upload-mb N] DIR
import fs from 'node:fs';
import path from 'node:path';
import { testMedia } from '../testkit/media.js';
import { makeBadMedia } from '../testkit/hostile-corpus/bad-media.js';
import { hostileCorpus } from '../testkit/hostile-corpus/cases.js';

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const [value] = args.splice(i, 2).slice(1);
    return value;
  };
  const credentials = option('--auth', 'admin:password');
  const maxUploadMb = Number(option('--max-upload-mb', '2'));
  const dir = args[0];
  if (!dir || !Number.isFinite(maxUploadMb)) {
    console.error('usage: make-hostile-corpus [--auth user:password] [--max-upload-mb N] DIR');
    process.exit(2);
  }
  const media = testMedia();
  const bad = makeBadMedia(media, path.join(dir, '.media'));
  const cases = hostileCorpus(media, bad, {
    auth: 'Basic ' + Buffer.from(credentials).toString('base64'),
    maxUploadBytes: maxUploadMb * 1024 * 1024,
  });
  fs.mkdirSync(dir, { recursive: true });
  const manifest = cases.map((c, i) => {
    const file = `${String(i).padStart(3, '0')}-${c.group}-${c.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}.http`;
    fs.writeFileSync(path.join(dir, file), c.request);
    return { file, group: c.group, name: c.name, expect: c.expect };
  });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ maxUploadMb, cases: manifest }, null, 2) + '\n');
  console.log(`${cases.length} requests written to ${dir} (MAX_UPLOAD_MB=${maxUploadMb} for the oversize cases)`);
}

main();
