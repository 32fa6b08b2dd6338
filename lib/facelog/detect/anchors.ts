// BlazeFace's SSD anchors, generated as MediaPipe's SsdAnchorsCalculator does for the back-camera
// model (mediapipe/modules/face_detection/face_detection_back*.pbtxt: 4 layers with strides
// 16, 32, 32, 32, aspect ratio 1 plus one interpolated scale per layer, anchor offset 0.5, fixed
// anchor size). Consecutive layers with the same stride share one feature map, so this gives
// 16x16 cells x 2 anchors (stride 16) then 8x8 cells x 6 anchors (stride 32): 896 anchors, the
// order of the model's outputs ([1,512,*] then [1,384,*]). A smaller input has the same maps,
// smaller: at 128, 8x8 x 2 then 4x4 x 6, 224 anchors.

import { MODEL_INPUT_SIZE } from './model-sizes.js';

export { MODEL_INPUT_SIZE };

/** One anchor: a cell centre in model-input pixels (the box size is fixed, so only the centre counts). */
export interface Anchor {
  x: number;
  y: number;
}

/** Anchor layers of one feature map: its stride and how many anchors sit on each cell. */
export interface AnchorLayer {
  stride: number;
  anchorsPerCell: number;
}

const STRIDES = [16, 32, 32, 32];
/** Aspect ratio 1.0 and the interpolated scale: two anchors per layer. */
const ANCHORS_PER_LAYER = 2;
const ANCHOR_OFFSET = 0.5;

/** The feature maps in output order: [{16, 2}, {32, 6}] for the back model. */
export function anchorLayers(strides: number[] = STRIDES): AnchorLayer[] {
  const layers: AnchorLayer[] = [];
  for (const stride of strides) {
    const last = layers[layers.length - 1];
    if (last && last.stride === stride) last.anchorsPerCell += ANCHORS_PER_LAYER;
    else layers.push({ stride, anchorsPerCell: ANCHORS_PER_LAYER });
  }
  return layers;
}

/** Every anchor centre, feature map by feature map, row by row, cell by cell. */
export function generateAnchors(inputSize = MODEL_INPUT_SIZE, strides: number[] = STRIDES): Anchor[] {
  const anchors: Anchor[] = [];
  for (const { stride, anchorsPerCell } of anchorLayers(strides)) {
    const cells = Math.ceil(inputSize / stride);
    for (let row = 0; row < cells; row++) {
      for (let col = 0; col < cells; col++) {
        const x = ((col + ANCHOR_OFFSET) / cells) * inputSize;
        const y = ((row + ANCHOR_OFFSET) / cells) * inputSize;
        for (let k = 0; k < anchorsPerCell; k++) anchors.push({ x, y });
      }
    }
  }
  return anchors;
}
