// The face-log benches' yardsticks, timed on the same video just before the face log:
// - issue 27's baseline: ffmpeg decoding to raw BGR frames into a pipe whose reader drops them
//   (`ffmpeg -threads 2 -i VIDEO -f rawvideo -pix_fmt bgr24 pipe:1 | cat >/dev/null`), what a
//   face log would cost if its analysis were free and it still had to read every frame; `cat` is
//   the cheapest reader there is;
// - the same decode writing to /dev/null itself, which the kernel discards without a copy;
// - the face log's own two ffmpeg processes with nothing between them: its decoder (I420, one
//   thread) piped into its overlay encoder (x264), the part of a face log that is not analysis.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decoderArgs } from '../lib/video/frame-reader.js';
import { encoderArgs } from '../lib/video/video-encoder.js';

export interface DecodeBaseline {
  /** Wall-clock ms of ffmpeg decoding to BGR into a pipe that `cat` drains to /dev/null. */
  pipeMs: number;
  /** The same with ffmpeg's output going to /dev/null directly (no pipe). */
  devNullMs: number;
  /** The face log's decoder piped straight into its overlay encoder. */
  transcodeMs: number;
}

export async function decodeBaseline(file: string, media: { width: number; height: number; fps: number }): Promise<DecodeBaseline> {
  const decodeToBgr = ['-v', 'error', '-nostdin', '-threads', '2', '-i', file, '-map', '0:v:0', '-f', 'rawvideo', '-pix_fmt', 'bgr24', 'pipe:1'];
  const pipeMs = await timePipeline([decodeToBgr, null]);
  const devNullMs = await timePipeline([decodeToBgr]);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'decode-baseline-')), 'overlay.mp4');
  try {
    const transcodeMs = await timePipeline([decoderArgs(file, media), encoderArgs(out, media)]);
    return { pipeMs, devNullMs, transcodeMs };
  } finally {
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}

/**
 * Runs ffmpeg command lines, each one's stdout piped into the next one's stdin (a kernel pipe
 * between the two processes: no byte passes through this one); `null` is `cat` to /dev/null. The
 * last one's stdout is /dev/null. Resolves with the wall-clock ms until all have exited.
 */
function timePipeline(stages: (string[] | null)[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let previous: ChildProcess | null = null;
    let pending = stages.length;
    stages.forEach((args, i) => {
      const last = i === stages.length - 1;
      const stdin = previous ? previous.stdout! : 'ignore';
      const child: ChildProcess = spawn(args ? 'ffmpeg' : 'cat', args ?? [], { stdio: [stdin, last ? 'ignore' : 'pipe', 'inherit'] });
      child.on('error', reject).on('exit', (code) => {
        if (code !== 0) reject(new Error(`${args ? 'ffmpeg' : 'cat'} exited with ${code}: ${(args ?? []).join(' ')}`));
        else if (--pending === 0) resolve(performance.now() - t0);
      });
      previous = child;
    });
  });
}
