// One of the converted face-api nets (native-models/, see testkit/models/) loaded in OpenCV DNN.
// Both take a square crop as [1, 3, size, size] RGB planes of 0..255: their normalisation is inside
// the model, so the blob is the crop as it is.
import { existsSync } from 'node:fs';
import path from 'node:path';
import cv, { withThreads } from '../../video/opencv.js';

/**
 * OpenCV threads of a forward pass: the worker's main thread is the face log's critical path, with
 * the other core partly idle. With two, a 720p bench video's face log with gender on runs 3%
 * faster than with one (79.5 against 77 fps; `node build/scripts/bench-facelog.js`).
 */
const FORWARD_THREADS = 2;

export interface FaceNet {
  /** Runs the net on a size x size BGR crop and returns the named output's `length` floats. */
  run(crop: cv.Mat, output: string, length: number): Float32Array;
}

export function loadFaceNet(modelDir: string, file: string, size: number): FaceNet {
  const model = path.join(modelDir, file);
  if (!existsSync(model)) throw new Error(`${model} is missing: run \`make models\``);
  const net = cv.readNetFromONNX(model);
  return {
    run(crop, output, length) {
      if (crop.rows !== size || crop.cols !== size) throw new Error(`${file} takes ${size}x${size} crops, got ${crop.cols}x${crop.rows}`);
      net.setInput(cv.blobFromImage(crop, 1, new cv.Size(size, size), new cv.Vec3(0, 0, 0), true, false));
      // DNN outputs are n-dimensional Mats, whose getData() throws: flatten to 2-D first.
      const bytes = withThreads(FORWARD_THREADS, () => net.forward(output)).flattenFloat(1, length).getData();
      // Copy into a buffer of its own: a Buffer's offset need not be aligned for Float32Array.
      return new Float32Array(Uint8Array.from(bytes).buffer);
    },
  };
}
