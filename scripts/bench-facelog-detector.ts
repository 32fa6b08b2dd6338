// Speed and recall of the face log's detector against OpenCV's Haar cascade, on composites: real
// faces (face-api's sample photos, human's face-match grid, messi5.jpg) pasted at known widths
// onto vtest.avi frames scaled to each frame size.
//
//   node build/scripts/bench-facelog-detector.js [--frames N]
//
// For each frame size and min_size: ms per whole-frame call (p50 wall clock, and mean CPU time of
// this process: the machine may be shared), model tiles per call, recall by pasted face width,
// and other detections per frame (vtest's own people included: their faces reach ~35 px at
// 1080p); then the cost of a call restricted to one person-sized region. A pasted face counts as
// found by a detection whose centre lies in its box and whose width is 0.5-2x its width (Haar's
// box is drawn larger than BlazeFace's, so IoU would not compare the two fairly).
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import cv from '../lib/video/opencv.js';
import { createBlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';
import type { Box } from '../lib/facelog/types.js';
import { nearestRankQuantile } from '../lib/stats.js';
import { FACE_API_SAMPLES, locateFaces, menOfFaceMatchGrid, MESSI, pasteFaces, vtestFrames, type SourceFace } from '../testkit/face-composites.js';

const MODEL_DIR = fileURLToPath(new URL('../../native-models/', import.meta.url));
const HAAR_CASCADE = '/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml';
const FRAME_SIZES: [number, number][] = [
  [640, 480],
  [1280, 720],
  [1920, 1080],
];
const MIN_SIZES = [30, 60];
const FACE_WIDTHS = [30, 40, 60, 100, 150];
/** OpenCV's usual Haar settings: 10% scale steps, 3 neighbours. */
const HAAR_SCALE_FACTOR = 1.1;
const HAAR_MIN_NEIGHBOURS = 3;

interface Detector {
  name: string;
  detect(frame: cv.Mat, minSize: number, regions?: Box[]): Box[];
  tiles(): number | undefined;
}

interface Row {
  detector: string;
  size: string;
  minSize: number;
  p50: number;
  cpu: number;
  tiles: string;
  recall: Record<number, string>;
  others: number;
}

function main(): void {
  const framesArg = process.argv.indexOf('--frames');
  const frameCount = framesArg > 0 ? Number(process.argv[framesArg + 1]) : 12;

  const blaze = createBlazeFaceDetector(MODEL_DIR);
  const haar = new cv.CascadeClassifier(HAAR_CASCADE);
  const detectors: Detector[] = [
    {
      name: 'BlazeFace',
      detect: (frame, minSize, regions) => blaze.detect(frame, { minSize, regions }).map((d) => d.box),
      tiles: () => blaze.lastTileCount,
    },
    {
      name: 'Haar',
      detect: (frame, minSize) =>
        haar
          .detectMultiScale(frame.bgrToGray(), HAAR_SCALE_FACTOR, HAAR_MIN_NEIGHBOURS, 0, new cv.Size(minSize, minSize))
          .objects.map((r) => ({ x: r.x, y: r.y, width: r.width, height: r.height })),
      tiles: () => undefined,
    },
  ];

  const started = performance.now();
  const faces: SourceFace[] = [
    ...FACE_API_SAMPLES.flatMap((file) => locateFaces(blaze, cv.imread(file), 100, file)),
    ...menOfFaceMatchGrid(blaze),
    ...locateFaces(blaze, cv.imread(MESSI), 30, MESSI),
  ];
  console.log(`${faces.length} source faces located in ${((performance.now() - started) / 1000).toFixed(1)} s; ${frameCount} composites per frame size`);

  // The model alone: a 256x256 frame is one tile at scale 1 with min_size 16.
  const tile = vtestFrames([0], 256, 256)[0];
  const tileTimes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    blaze.detect(tile, { minSize: 16 });
    tileTimes.push(performance.now() - t);
  }

  const rows: Row[] = [];
  const regionRows: string[] = [];
  for (const [width, height] of FRAME_SIZES) {
    const backgrounds = vtestFrames([0, 100, 200, 300, 400, 500, 600, 700], width, height);
    // Composite i: one face of each width, faces taken in turn through the list.
    const composites = Array.from({ length: frameCount }, (_, i) => {
      const frame = backgrounds[i % backgrounds.length].copy();
      const placements = FACE_WIDTHS.map((w, j) => ({ face: faces[(i * FACE_WIDTHS.length + j) % faces.length], width: w }));
      const boxes = pasteFaces(frame, placements, ((i * 7) % 9) / 4 - 1);
      return { frame, pasted: FACE_WIDTHS.map((w, j) => ({ width: w, box: boxes[j] })) };
    });
    for (const minSize of MIN_SIZES) {
      for (const detector of detectors) {
        const times: number[] = [];
        const tiles = new Set<number>();
        const found: Record<number, number> = {};
        let others = 0;
        const cpuBefore = process.cpuUsage();
        for (const { frame, pasted } of composites) {
          const t = performance.now();
          const boxes = detector.detect(frame, minSize);
          times.push(performance.now() - t);
          const n = detector.tiles();
          if (n !== undefined) tiles.add(n);
          for (const p of pasted) if (boxes.some((b) => hits(b, p.box))) found[p.width] = (found[p.width] ?? 0) + 1;
          others += boxes.filter((b) => !pasted.some((p) => hits(b, p.box))).length;
        }
        const cpu = process.cpuUsage(cpuBefore);
        rows.push({
          detector: detector.name,
          size: `${width}x${height}`,
          minSize,
          p50: nearestRankQuantile(times, 0.5),
          cpu: (cpu.user + cpu.system) / 1000 / composites.length,
          tiles: tiles.size ? [...tiles].sort((a, b) => a - b).join('/') : '-',
          recall: Object.fromEntries(FACE_WIDTHS.map((w) => [w, `${Math.round((100 * (found[w] ?? 0)) / composites.length)}%`])),
          others: others / composites.length,
        });
      }
    }
    // One person-sized region (a face to each side, the body below) around the 60 px face, as the
    // frame loop asks between whole-frame scans.
    const times: number[] = [];
    const tiles = new Set<number>();
    let found = 0;
    for (const { frame, pasted } of composites) {
      const face = pasted.find((p) => p.width === 60)!.box;
      const region = { x: face.x - face.width, y: face.y - face.width, width: 3 * face.width, height: 7 * face.width };
      const t = performance.now();
      const boxes = blaze.detect(frame, { minSize: 30, regions: [region] }).map((d) => d.box);
      times.push(performance.now() - t);
      tiles.add(blaze.lastTileCount);
      if (boxes.some((b) => hits(b, face))) found++;
    }
    regionRows.push(
      `${`${width}x${height}`.padEnd(10)} ${fmt(nearestRankQuantile(times, 0.5), 8)} ${[...tiles].sort((a, b) => a - b).join('/').padStart(6)} ${`${Math.round((100 * found) / composites.length)}%`.padStart(8)}`,
    );
  }

  const header = `${'detector'.padEnd(10)} ${'frame'.padEnd(10)} ${'min'.padStart(4)} ${'p50 ms'.padStart(8)} ${'cpu ms'.padStart(8)} ${'tiles'.padStart(6)} ${FACE_WIDTHS.map((w) => `${w}px`.padStart(6)).join(' ')} ${'others'.padStart(7)}`;
  console.log('\nWhole-frame calls: time per call, tiles per call, recall by pasted face width, other detections per frame');
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const r of rows) {
    console.log(
      `${r.detector.padEnd(10)} ${r.size.padEnd(10)} ${String(r.minSize).padStart(4)} ${fmt(r.p50, 8)} ${fmt(r.cpu, 8)} ${r.tiles.padStart(6)} ${FACE_WIDTHS.map((w) => r.recall[w].padStart(6)).join(' ')} ${r.others.toFixed(2).padStart(7)}`,
    );
  }
  console.log('\nBlazeFace restricted to one person-sized region around a 60 px face (min_size 30)');
  console.log(`${'frame'.padEnd(10)} ${'p50 ms'.padStart(8)} ${'tiles'.padStart(6)} ${'found'.padStart(8)}`);
  for (const line of regionRows) console.log(line);
  console.log(`\nOne tile (a 256x256 frame): min ${fmt(Math.min(...tileTimes), 0)} ms, p50 ${fmt(nearestRankQuantile(tileTimes, 0.5), 0)} ms`);
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** Whether detection `d` is the face at `truth`: its centre inside the face's box, its width 0.5-2x. */
function hits(d: Box, truth: Box): boolean {
  const cx = d.x + d.width / 2;
  const cy = d.y + d.height / 2;
  const ratio = d.width / truth.width;
  return cx >= truth.x && cx <= truth.x + truth.width && cy >= truth.y && cy <= truth.y + truth.height && ratio >= 0.5 && ratio <= 2;
}

function fmt(ms: number, width: number): string {
  return ms.toFixed(0).padStart(width);
}

main();
