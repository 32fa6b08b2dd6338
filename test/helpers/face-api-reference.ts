// The original face-api nets, run with TensorFlow.js's CPU backend in Node, as the reference the
// converted ONNX models are checked against.
//
// face-api's bundled ESM build (TensorFlow.js 4.22 inside) is a browser build: in Node it picks
// TensorFlow.js's Node platform, whose `util` import the bundler stubbed out, and dies at import.
// Declaring a WorkerGlobalScope for the duration of the import makes it take the browser platform,
// which only needs fetch, TextEncoder and performance (all in Node). tfjs-node is not an option:
// it downloads a native binary at install.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The little of TensorFlow.js the tests use (face-api's types point at packages not installed). */
export interface Tensor {
  shape: number[];
  data(): Promise<Float32Array | Int32Array>;
  dispose(): void;
}

interface Tf {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  tensor3d(values: Int32Array | Float32Array, shape: [number, number, number], dtype?: string): Tensor;
  tensor4d(values: Float32Array, shape: [number, number, number, number]): Tensor;
  io: { decodeWeights(buffer: ArrayBuffer, specs: unknown): Record<string, Tensor> };
}

interface Net {
  loadFromWeightMap(map: Record<string, Tensor>): void;
}

export type { Box, Point } from '../../lib/facelog/types.js';
import type { Box, Point } from '../../lib/facelog/types.js';

/** One face as face-api's pipeline sees it, from a given detection box on. */
export interface ReferenceFace {
  box: Box;
  /** The 68 landmarks, in image pixels. */
  landmarks: Point[];
  /** landmarks.align(): min box of the 68 points padded 20%: the crop of the age/gender path. */
  alignedRect: Box;
  /** withFaceDescriptors() (dlib-aligned crop), when asked for. */
  descriptor?: Float32Array;
  /** withAgeAndGender(), when asked for: probability male. */
  male?: number;
}

export interface FaceApiReference {
  tf: Tf;
  /** tf.io.decodeWeights of a model's manifest and .bin, as face-api loads it. */
  decodeWeights(model: string): Promise<Map<string, { shape: number[]; data: Float32Array }>>;
  /** FaceRecognitionNet on a [1, 150, 150, 3] RGB 0..255 tensor: the 128-d descriptor. */
  describe(rgb150: Float32Array): Promise<Float32Array>;
  /** AgeGenderNet on a [1, 112, 112, 3] RGB 0..255 tensor: probability male and age. */
  ageGender(rgb112: Float32Array): Promise<{ male: number; age: number }>;
  /**
   * face-api's pipeline after its detector, on given face boxes of an RGB image (H x W x 3 bytes):
   * landmarks, and with `full` also its descriptor and gender. (Its SSD detector is left out: it
   * takes 10-40 s per photo on TensorFlow.js's CPU backend.)
   */
  facesAt(rgb: Uint8Array, width: number, height: number, boxes: Box[], full?: boolean): Promise<ReferenceFace[]>;
}

const require = createRequire(import.meta.url);
export const FACE_API_DIR = path.dirname(require.resolve('@vladmandic/face-api/package.json'));
const MODEL_DIR = path.join(FACE_API_DIR, 'model');

let loading: Promise<FaceApiReference> | null = null;

export function faceApiReference(): Promise<FaceApiReference> {
  loading ??= load();
  return loading;
}

async function load(): Promise<FaceApiReference> {
  const g = globalThis as { WorkerGlobalScope?: unknown };
  g.WorkerGlobalScope = class {};
  let faceapi: any;
  try {
    faceapi = await import('@vladmandic/face-api/dist/face-api.esm.js');
  } finally {
    delete g.WorkerGlobalScope;
  }
  const tf = faceapi.tf as Tf;
  await tf.setBackend('cpu');
  await tf.ready();

  const weightMap = (model: string) => {
    const groups = JSON.parse(readFileSync(path.join(MODEL_DIR, `${model}-weights_manifest.json`), 'utf8')) as { paths: string[]; weights: unknown[] }[];
    if (groups.length !== 1) throw new Error(`${model}: ${groups.length} weight groups`);
    const bin = Buffer.concat(groups[0].paths.map((p) => readFileSync(path.join(MODEL_DIR, p))));
    return tf.io.decodeWeights(new Uint8Array(bin).buffer, groups[0].weights);
  };
  const nets = faceapi.nets as Record<string, Net>;
  nets.faceRecognitionNet.loadFromWeightMap(weightMap('face_recognition_model'));
  nets.ageGenderNet.loadFromWeightMap(weightMap('age_gender_model'));
  nets.faceLandmark68Net.loadFromWeightMap(weightMap('face_landmark_68_model'));

  return {
    tf,
    async decodeWeights(model) {
      const map = weightMap(model);
      const out = new Map<string, { shape: number[]; data: Float32Array }>();
      for (const [name, t] of Object.entries(map)) {
        out.set(name, { shape: t.shape, data: Float32Array.from(await t.data()) });
        t.dispose();
      }
      return out;
    },
    async describe(rgb150) {
      const input = tf.tensor4d(rgb150, [1, 150, 150, 3]);
      try {
        return (await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(input)) as Float32Array;
      } finally {
        input.dispose();
      }
    },
    async ageGender(rgb112) {
      const input = tf.tensor4d(rgb112, [1, 112, 112, 3]);
      try {
        const r = await faceapi.nets.ageGenderNet.predictAgeAndGender(input);
        return { male: r.gender === 'male' ? r.genderProbability : 1 - r.genderProbability, age: r.age };
      } finally {
        input.dispose();
      }
    },
    async facesAt(rgb, width, height, boxes, full = false) {
      const image = tf.tensor3d(Int32Array.from(rgb), [height, width, 3], 'int32');
      try {
        const detections = boxes.map((b) => ({
          detection: new faceapi.FaceDetection(1, new faceapi.Rect(b.x / width, b.y / height, b.width / width, b.height / height), { width, height }),
        }));
        const task = new faceapi.DetectAllFaceLandmarksTask(Promise.resolve(detections), image, false);
        const results = full ? await task.withFaceDescriptors().withAgeAndGender() : await task;
        if (results.length !== boxes.length) throw new Error(`face-api kept ${results.length} of ${boxes.length} faces`);
        return results.map((r: any): ReferenceFace => ({
          box: plainBox(r.detection.box),
          landmarks: r.landmarks.positions.map((p: Point) => ({ x: p.x, y: p.y })),
          alignedRect: plainBox(r.alignedRect.box),
          descriptor: r.descriptor,
          male: r.gender === undefined ? undefined : r.gender === 'male' ? r.genderProbability : 1 - r.genderProbability,
        }));
      } finally {
        image.dispose();
      }
    },
  };
}

function plainBox(b: Box): Box {
  return { x: b.x, y: b.y, width: b.width, height: b.height };
}
