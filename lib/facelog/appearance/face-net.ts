// One of the converted face-api nets (native-models/, see testkit/models/) in onnxruntime or in
// OpenCV DNN, as FACE_DETECTOR_RUNTIME says for all of the face log's nets. Both take a square
// crop as [1, 3, size, size] RGB planes of 0..255: their normalisation is inside the model, so the
// blob is the crop as it is.
//
// Measured, 50 passes of one crop in one process on this 2-core machine, twice (once with a bench
// running beside it), CPU time per pass: the descriptor (150 px) 4.7-5.1 ms in onnxruntime on one
// thread against 16.6-19.4 ms in OpenCV DNN on two (13.0-19.9 on one); the gender net (112 px)
// 1.4 ms against 7.6-8.5 ms (6.3-8.8 on one).
import { existsSync } from 'node:fs';
import path from 'node:path';
import cv, { withThreads } from '../../video/opencv.js';
import { DEFAULT_FACE_DETECTOR_RUNTIME, type FaceDetectorRuntime } from '../../config.js';
import { loadOnnxNet } from '../onnxruntime-session.js';
import { readFloats } from '../mat-floats.js';

/**
 * OpenCV threads of a forward pass: the worker's main thread is the face log's critical path, with
 * the other core partly idle. With two, a 720p bench video's face log with gender on runs 3%
 * faster than with one (79.5 against 77 fps; `node build/scripts/bench-facelog.js`).
 */
const OPENCV_FORWARD_THREADS = 2;

export interface FaceNet {
  /** Runs the net on a size x size BGR crop and returns the named output's `length` floats. */
  run(crop: cv.Mat, output: string, length: number): Float32Array;
}

export function loadFaceNet(modelDir: string, file: string, size: number, runtime: FaceDetectorRuntime = DEFAULT_FACE_DETECTOR_RUNTIME): FaceNet {
  const model = path.join(modelDir, file);
  if (!existsSync(model)) throw new Error(`${model} is missing: run \`make models\``);
  const blob = (crop: cv.Mat) => {
    if (crop.rows !== size || crop.cols !== size) throw new Error(`${file} takes ${size}x${size} crops, got ${crop.cols}x${crop.rows}`);
    return cv.blobFromImage(crop, 1, new cv.Size(size, size), new cv.Vec3(0, 0, 0), true, false);
  };
  if (runtime === 'onnxruntime') {
    const net = loadOnnxNet(model);
    return {
      run(crop, output, length) {
        const [values] = net.run(blob(crop), [output]);
        return values.slice(0, length);
      },
    };
  }
  const net = cv.readNetFromONNX(model);
  return {
    run(crop, output, length) {
      net.setInput(blob(crop));
      return readFloats(withThreads(OPENCV_FORWARD_THREADS, () => net.forward(output)), 1, length).slice();
    },
  };
}
