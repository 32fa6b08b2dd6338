// Run as a child process by test/36 (`node <V8 flags> young-generation-probe.js <video> <frames>`):
// a frame loop over a real video that makes short-lived objects each frame, as the face log's
// analysis does, and collects them as the worker's frame loop does (video/frame-garbage.ts).
// Prints one JSON line: the size V8 reserved for its young generation at the end, in MiB.
import v8 from 'node:v8';
import { readFrames } from '../../lib/video/frame-reader.js';
import { collectFrameGarbage } from '../../lib/video/frame-garbage.js';

const [video, framesArg] = process.argv.slice(2);

let index = 0;
const kept: unknown[] = [];
for await (const frame of readFrames(video, { width: 320, height: 240, maxFrames: Number(framesArg) }).frames()) {
  const boxes = [];
  for (let k = 0; k < 3000; k++) boxes.push({ frame: index, box: { x: k, y: k + 1, width: 30, height: 40 } });
  // A few live on, as a track's records do.
  if (index++ % 10 === 0) kept.push(boxes.slice(0, 10));
  collectFrameGarbage();
  void frame;
}
const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!;
console.log(JSON.stringify({ frames: index, kept: kept.length, youngMiB: young.space_size / (1024 * 1024) }));
process.exit(0);
