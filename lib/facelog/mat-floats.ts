// The floats of an OpenCV DNN Mat, for the face log's nets in either runtime: a net's output, or
// an input blob handed to onnxruntime.
import type cv from '../video/opencv.js';

/** `rows` x `cols` floats of `mat` (getData() throws on n-dimensional Mats; flattenFloat views them). */
export function readFloats(mat: cv.Mat, rows: number, cols: number): Float32Array {
  const bytes = mat.flattenFloat(rows, cols).getData();
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, rows * cols);
  return new Float32Array(Uint8Array.prototype.slice.call(bytes).buffer);
}
