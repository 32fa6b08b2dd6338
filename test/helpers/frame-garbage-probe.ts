// Run as a child process by test/36 (`node [--expose-gc] frame-garbage-probe.js <video> <frames>
// <mode>`, with glibc mapping each Mat's memory on its own so that a freed Mat leaves the resident
// memory at once): a frame loop over a real video that makes a 1 MB Mat per frame, as the face
// log's analysis leaves Mats. Modes: `left` drops the Mat with the frame, as garbage; `released`
// releases it (the floor: what the loop's memory rises by anyway). Prints one JSON line: how far
// the resident memory rose above its level at the first frame, at most, in Mats.
import cv from '../../lib/video/opencv.js';
import { readFrames } from '../../lib/video/frame-reader.js';

const MAT_BYTES = 1024 * 1024;

const [video, framesArg, mode] = process.argv.slice(2);

let before = 0;
let maxRise = 0;
let index = 0;
for await (const frame of readFrames(video, { width: 320, height: 240, maxFrames: Number(framesArg) }).frames()) {
  const rss = process.memoryUsage.rss();
  if (index++ === 0) before = rss;
  maxRise = Math.max(maxRise, rss - before);
  const mat: cv.Mat = frame.luma().resize(1024, 1024);
  if (mode === 'released') mat.release();
}
console.log(JSON.stringify({ frames: index, maxRiseMats: Math.round(maxRise / MAT_BYTES) }));
process.exit(0);
