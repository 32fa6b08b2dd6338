// A face-log net in onnxruntime (CPU), run synchronously. The package's public
// InferenceSession.run() is asynchronous only because it defers the call with setImmediate; its
// native binding's run() is synchronous (binding.d.ts: "a simple synchronized inference session
// object wrap"), and the face log calls its nets synchronously inside the worker process, so the
// binding is used directly. The version is pinned (package.json) because that module is not the
// package's public face; test/35, test/37 and test/40 run it.
import { Tensor } from 'onnxruntime-node';
import { binding, initOrt } from 'onnxruntime-node/dist/binding.js';
import type cv from '../video/opencv.js';
import { readFloats } from './mat-floats.js';

/**
 * Threads of a forward pass. One: the ffmpeg decoder and encoder take the other core, and
 * onnxruntime's second thread spins while it waits for work. On a busy 2-core machine (load 3-4)
 * a BlazeFace pass on two threads took longer than on one (23.3 against 18.3 ms at 256 px), and a
 * 2-minute 1080p face log 69.3 s against 43.2 s (`bench-long-video.js --minutes 2`, one run after
 * the other). With spinning off, 1500 frames of the 720p one took 18.2-18.9 s against 16.6-19.9 s
 * on one thread (interleaved, quiet): no gain.
 */
const FORWARD_THREADS = 1;

/** onnxruntime's log level for session warnings: 3 = errors only (the models' unused initializers warn on load). */
const LOG_ERRORS_ONLY = 3;

export interface OnnxNet {
  /** The model's one input: its name and (fixed) shape. */
  readonly input: { name: string; shape: readonly number[] };
  /** Shapes of the model's outputs by name. */
  outputShape(name: string): readonly number[] | undefined;
  /** Runs the net on `blob` (an OpenCV DNN blob of the input's shape) and answers the named outputs' floats, in order. */
  run(blob: cv.Mat, outputs: readonly string[]): Float32Array[];
}

export function loadOnnxNet(file: string): OnnxNet {
  initOrt();
  const session = new binding.InferenceSession();
  session.loadModel(file, {
    intraOpNumThreads: FORWARD_THREADS,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: LOG_ERRORS_ONLY,
  });
  if (session.inputMetadata.length !== 1) throw new Error(`${file}: expected one input, got ${session.inputMetadata.length}`);
  const { name, shape } = session.inputMetadata[0];
  // The blob's floats as one 2-D view: its first dimensions as rows, its last as columns.
  const cols = shape[shape.length - 1];
  const rows = shape.reduce((n, d) => n * d, 1) / cols;
  // Every output is fetched, in the model's order: the binding names the results by position, so
  // fetching `age` alone of the gender net's [gender, age] answers its value under `gender`'s name.
  const fetches = Object.fromEntries(session.outputMetadata.map((m) => [m.name, null]));
  return {
    input: { name, shape },
    outputShape: (output) => session.outputMetadata.find((m) => m.name === output)?.shape,
    run(blob, outputs) {
      const out = session.run({ [name]: new Tensor('float32', readFloats(blob, rows, cols), shape) }, fetches, {});
      return outputs.map((o) => {
        const value = out[o] as Tensor | undefined;
        if (!value) throw new Error(`${file}: no output ${o}`);
        return value.data as Float32Array;
      });
    },
  };
}
