// The input sides BlazeFace runs at. The package ships the back-camera model for 256x256; the
// model preparation (scripts/models/resize-blazeface.ts) rewrites the same network for smaller
// inputs, so that a small region of the frame need not pay for a whole 256 tile: a forward pass
// costs in proportion to the input's area (OpenCV 4.6, one core, measured 2026-11-24: 25 ms at
// 256, 13.5 ms at 192, 6 ms at 128).

/** The package model's input side. */
export const MODEL_INPUT_SIZE = 256;
/** Every input side there is a model file for, smallest first. */
export const MODEL_SIZES = [128, 192, 256] as const;
export type ModelSize = (typeof MODEL_SIZES)[number];

/** The model file (in native-models/) for `size` x `size` inputs. */
export function blazeFaceModelFile(size: ModelSize): string {
  return `blazeface-back-${size}.onnx`;
}
