// BlazeFace's forward pass in onnxruntime (CPU): the same model files as blazeface-opencv.ts, in
// about half the time or less (tile-runtime.ts). The package's public InferenceSession.run() is
// asynchronous only because it defers the call with setImmediate; its native binding's run() is
// synchronous (binding.d.ts: "a simple synchronized inference session object wrap"), and the
// detector is called synchronously inside the worker process, so the binding is used directly.
// The version is pinned (package.json) because that module is not the package's public face;
// test/37 and test/40 run it.
import path from 'node:path';
import { Tensor } from 'onnxruntime-node';
import { binding, initOrt, type Binding } from 'onnxruntime-node/dist/binding.js';
import { generateAnchors } from './anchors.js';
import { blazeFaceModelFile } from './model-sizes.js';
import { decodeFaces, REGRESSOR_VALUES } from './decode.js';
import { readFloats } from './blazeface-opencv.js';
import { BLAZEFACE_OUTPUTS, inputBlob, MIN_SCORE, type TileModel } from './tile-runtime.js';
import type { TileSize } from './tiles.js';

/**
 * Threads of a forward pass. One: the ffmpeg decoder and encoder take the other core, and
 * onnxruntime's second thread spins while it waits for work. On a busy 2-core machine (load 3-4)
 * a pass on two threads took longer than on one (23.3 against 18.3 ms at 256 px), and a 2-minute
 * 1080p face log 69.3 s against 43.2 s (`bench-long-video.js --minutes 2`, one run after the other).
 */
const FORWARD_THREADS = 1;

/** onnxruntime's log level for session warnings: 3 = errors only (the models' unused initializers warn on load). */
const LOG_ERRORS_ONLY = 3;

/** The model for `size` x `size` tiles (model-sizes.ts) in onnxruntime, reporting faces that score at least `minScore`. */
export function loadOnnxRuntimeTileModel(modelDir: string, size: TileSize, minScore = MIN_SCORE): TileModel {
  initOrt();
  const session = new binding.InferenceSession();
  session.loadModel(path.join(modelDir, blazeFaceModelFile(size)), {
    intraOpNumThreads: FORWARD_THREADS,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: LOG_ERRORS_ONLY,
  });
  const anchors = generateAnchors(size);
  const input = checkShapes(session, size, anchors.length);
  const fetches = Object.fromEntries(BLAZEFACE_OUTPUTS.map((name) => [name, null]));
  return (tile) => {
    const blob = inputBlob(tile, size);
    const feeds = { [input]: new Tensor('float32', readFloats(blob, 3 * size, size), [1, 3, size, size]) };
    const out = session.run(feeds, fetches, {});
    const [logits16, logits32, boxes16, boxes32] = BLAZEFACE_OUTPUTS.map((name) => (out[name] as Tensor).data as Float32Array);
    const logits = new Float32Array(logits16.length + logits32.length);
    logits.set(logits16);
    logits.set(logits32, logits16.length);
    const regressors = new Float32Array(boxes16.length + boxes32.length);
    regressors.set(boxes16);
    regressors.set(boxes32, boxes16.length);
    return decodeFaces(logits, regressors, anchors, minScore);
  };
}

/**
 * The model's input name. Its outputs must match the anchors (896 for the 256 model) or every box
 * is wrong.
 */
function checkShapes(session: Binding.InferenceSession, size: TileSize, anchors: number): string {
  const inputs = session.inputMetadata;
  const outputs = BLAZEFACE_OUTPUTS.map((name) => session.outputMetadata.find((m) => m.name === name)?.shape ?? []);
  const [logits16, logits32, boxes16, boxes32] = outputs;
  const ok =
    inputs.length === 1 &&
    inputs[0].shape.join('x') === `1x3x${size}x${size}` &&
    logits16[1] + logits32[1] === anchors &&
    boxes16[1] === logits16[1] &&
    boxes32[1] === logits32[1] &&
    boxes16[2] === REGRESSOR_VALUES &&
    boxes32[2] === REGRESSOR_VALUES;
  if (!ok) {
    const shapes = outputs.map((s) => s.join('x')).join(', ');
    throw new Error(`${blazeFaceModelFile(size)}: input ${inputs.map((m) => m.shape.join('x')).join(', ')} and outputs ${shapes} do not match 1x3x${size}x${size} and ${anchors} anchors x ${REGRESSOR_VALUES} values`);
  }
  return inputs[0].name;
}
