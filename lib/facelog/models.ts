// The face log's models, loaded once per worker process and kept for its next jobs.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBlazeFaceDetector } from './detect/blazeface.js';
import type { FaceDetector } from './detect/detector.js';
import { createFaceDescriber } from './appearance/descriptor.js';
import { createGenderClassifier } from './gender/classifier.js';
import { AnalyticError } from '../errors.js';
import { faceDetectorRuntime } from '../config.js';

/** native-models/ at the top of the project (this file runs from build/lib/facelog/). */
export const MODEL_DIR = fileURLToPath(new URL('../../../native-models/', import.meta.url));

export interface FaceModels {
  detector: FaceDetector;
  describer: ReturnType<typeof createFaceDescriber>;
  gender: ReturnType<typeof createGenderClassifier>;
}

let loaded: FaceModels | null = null;

export function faceModels(): FaceModels {
  if (loaded) return loaded;
  if (!existsSync(`${MODEL_DIR}/manifest.json`)) {
    // An installation problem, not bad input: `make models` prepares them.
    throw new AnalyticError('models_missing', 'the face models are not installed (run `make models`)');
  }
  const runtime = faceDetectorRuntime();
  loaded = {
    detector: createBlazeFaceDetector(MODEL_DIR, { runtime }),
    describer: createFaceDescriber(MODEL_DIR, runtime),
    gender: createGenderClassifier(MODEL_DIR, runtime),
  };
  return loaded;
}
