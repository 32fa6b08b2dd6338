// Decoded frames as the face log keeps them (I420, lib/video/yuv-frame.ts) against ffmpeg's own
// BGR conversion of the same frame of a real video, and the overlay drawn into them, read back
// from the encoded H.264 file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';
import { FRAMES_AHEAD, readFrames } from '../lib/video/frame-reader.js';
import { VideoEncoder } from '../lib/video/video-encoder.js';
import { YuvFrame } from '../lib/video/yuv-frame.js';
import { drawTracks } from '../lib/facelog/output/overlay.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';
import { WORKER_V8_FLAGS } from '../lib/jobs/worker-pool.js';
import { runProbe } from './helpers/run-probe.js';

/** Frame `index` of `file` at width x height, converted to BGR by ffmpeg. */
function ffmpegBgr(file: string, index: number, width: number, height: number): cv.Mat {
  const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-vf', `select=eq(n\\,${index}),scale=${width}:${height}`, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'bgr24', 'pipe:1'], { maxBuffer: 1 << 26 });
  return new cv.Mat(raw, height, width, cv.CV_8UC3);
}

async function frameAt(file: string, index: number, width: number, height: number): Promise<YuvFrame> {
  const source = readFrames(file, { width, height });
  let i = 0;
  for await (const frame of source.frames()) {
    if (i++ === index) {
      source.close();
      return frame;
    }
  }
  throw new Error(`${file} has no frame ${index}`);
}

const meanAbsDiff = (a: cv.Mat, b: cv.Mat) => {
  const m = a.absdiff(b).mean();
  return (m.w + m.x + m.y) / 3;
};

describe('I420 frames', () => {
  it('convert to the BGR that ffmpeg gives, whole and by region, and their luma is grey', async () => {
    const frame = await frameAt(VTEST_AVI, 40, 768, 576);
    const reference = ffmpegBgr(VTEST_AVI, 40, 768, 576);
    expect(meanAbsDiff(frame.bgr(), reference)).to.be.below(2);
    const rect = new cv.Rect(100, 150, 300, 200);
    // Same size, and halved (as the trackers' pyramid levels take it).
    expect(meanAbsDiff(frame.bgrRegion(100, 150, 300, 200, 300, 200), reference.getRegion(rect))).to.be.below(4);
    const half = reference.getRegion(rect).resize(100, 150, 0, 0, cv.INTER_AREA);
    expect(meanAbsDiff(frame.bgrRegion(100, 150, 300, 200, 150, 100), half)).to.be.below(4);
    const grey = reference.bgrToGray();
    // Limited-range luma against full-range grey: 16 + 219/255 of it.
    const expected = grey.convertTo(cv.CV_8U, 219 / 255, 16);
    expect(frame.luma().absdiff(expected).mean().w).to.be.below(2);
  });

  it('decodes ahead while the main thread is busy in a long synchronous call (the pipe thread)', async () => {
    const source = readFrames(VTEST_AVI, { width: 768, height: 576 });
    const frames = source.frames();
    await frames.next();
    // As a detector run does; a frame is 663 KB, ten times what a pipe holds.
    const until = Date.now() + 500;
    while (Date.now() < until);
    // The decoded frames only wait to be delivered: a few turns of the event loop.
    for (let i = 0; i < 20 && source.ahead < FRAMES_AHEAD; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(source.ahead).to.equal(FRAMES_AHEAD);
    await frames.return(undefined);
  });

  it('an odd-sized video gets even frames with its picture in the top-left corner', async () => {
    const frame = await frameAt(VTEST_AVI, 0, 321, 241);
    expect([frame.width, frame.height]).to.deep.equal([322, 242]);
    const reference = ffmpegBgr(VTEST_AVI, 0, 321, 241);
    expect(meanAbsDiff(frame.bgr().getRegion(new cv.Rect(0, 0, 321, 241)), reference)).to.be.below(3);
  });

  it('the overlay draws each box and number in its colour into the frame, and H.264 keeps it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-overlay-'));
    try {
      const frame = await frameAt(VTEST_AVI, 10, 768, 576);
      const before = frame.bgr().copy();
      frame.release();
      drawTracks(frame, [{ track: 1, box: { x: 200, y: 150, width: 120, height: 130 } }]);
      const file = path.join(dir, 'overlay.mp4');
      const encoder = new VideoEncoder(file, { width: 768, height: 576, fps: 25 });
      await encoder.write(frame);
      await encoder.finish();
      const decoded = ffmpegBgr(file, 0, 768, 576);
      // Track 1's colour is orange-yellow (BGR 0, 200, 255) along the box's edges...
      for (const [x, y] of [[260, 151], [201, 215], [318, 215], [260, 278]]) {
        const [b, g, r] = decoded.atRaw(y, x) as unknown as number[];
        expect(r, `${x},${y}`).to.be.above(200);
        expect(g, `${x},${y}`).to.be.within(150, 245);
        expect(b, `${x},${y}`).to.be.below(80);
      }
      // ...the number above it is drawn, and the inside of the box is the picture as it was.
      const change = (r: cv.Rect) => meanAbsDiff(decoded.getRegion(r), before.getRegion(r));
      const label = change(new cv.Rect(196, 110, 40, 36));
      const beside = change(new cv.Rect(260, 110, 40, 36));
      expect(label).to.be.above(5);
      expect(label).to.be.above(3 * beside);
      const inside = new cv.Rect(215, 165, 90, 100);
      expect(meanAbsDiff(decoded.getRegion(inside), before.getRegion(inside))).to.be.below(6);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // A frame loop in a worker (node --expose-gc) frees what each frame's analysis left behind by the
  // next frame (lib/video/frame-garbage.ts). Without the collections, 300 frames that each leave a
  // 1 MB Mat raised the resident memory by 249-359 MB in five runs, against 38-39 with them and
  // 26-41 when every Mat is released by hand (the loop's own rise, which moves with the machine's load).
  it("frees each frame's leftover Mats by the next frame", async function () {
    this.timeout(120_000);
    // Each Mat mapped on its own: a freed one leaves the resident memory at once.
    const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: '65536' };
    const probe = (mode: string) =>
      runProbe<{ frames: number; maxRiseMats: number }>('frame-garbage-probe', [VTEST_AVI, '300', mode], { execArgv: ['--expose-gc'], env });
    const released = await probe('released');
    const left = await probe('left');
    expect(left.frames).to.equal(300);
    expect(left.maxRiseMats, `released by hand: ${released.maxRiseMats}`).to.be.at.most(released.maxRiseMats + 50);
  });

  // V8 grew the young generation it reserves through a frame loop that collects it after every
  // frame, though almost nothing in it is alive, and its touched pages stayed resident: 16 to 128
  // MiB after these 300 frames (five runs). The workers' V8 flags (jobs/worker-pool.ts) cap it:
  // 2 MiB here.
  it("keeps a worker's young generation small through a frame loop", async function () {
    this.timeout(120_000);
    const probe = await runProbe<{ frames: number; youngMiB: number }>('young-generation-probe', [VTEST_AVI, '300'], { execArgv: WORKER_V8_FLAGS });
    expect(probe.frames).to.equal(300);
    expect(probe.youngMiB).to.be.at.most(4);
  });
});
