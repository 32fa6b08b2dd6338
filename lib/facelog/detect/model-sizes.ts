// The input sides BlazeFace runs at. The package ships the back-camera model for 256x256; the
// model preparation (testkit/models/rewrite-blazeface.ts) rewrites the same network for NCHW
// inputs of each side, so that a small region of the frame need not pay for a whole 256 tile: a
// forward pass costs about in proportion to the input's area (the measured times: tiles.ts,
// tileCost).

/** The package model's input side. */
export const MODEL_INPUT_SIZE = 256;
/** Every input side there is a model file for, smallest first. */
export const MODEL_SIZES = [128, 192, 256] as const;
export type ModelSize = (typeof MODEL_SIZES)[number];

/** The model file (in native-models/) for NCHW 1x3x`size`x`size` inputs, RGB in [-1, 1]. */
export function blazeFaceModelFile(size: ModelSize): string {
  return `blazeface-back-${size}.onnx`;
}

/**
 * The same network with its 24-channel stage 32 wide, for onnxruntime's blocked layout
 * (testkit/models/widen-blazeface.ts): the same outputs up to float rounding, in 35-40% less
 * time there. OpenCV DNN runs the narrow file, which it runs no slower than the wide one.
 */
export function blazeFaceWideModelFile(size: ModelSize): string {
  return `blazeface-back-${size}-wide.onnx`;
}
