// Where the installed @vladmandic/face-api keeps its TensorFlow.js weights, and how a converted
// model names its source in native-models/manifest.json.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const packageJson = require.resolve('@vladmandic/face-api/package.json');
const version = (require('@vladmandic/face-api/package.json') as { version: string }).version;

export const FACE_API_MODEL_DIR = path.join(path.dirname(packageJson), 'model');

export function faceApiSource(model: string): string {
  return `npm @vladmandic/face-api@${version}: model/${model} (TensorFlow.js weights, converted)`;
}
