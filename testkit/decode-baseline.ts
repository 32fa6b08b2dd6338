// The face-log benches' yardstick: ffmpeg decoding the same video to raw BGR frames into a pipe
// whose reader drops them (`ffmpeg -threads 2 -i VIDEO -f rawvideo -pix_fmt bgr24 pipe:1 | cat
// >/dev/null`), as issue 27 defines it: what a face log would cost if its analysis were free and
// it still had to read every frame. `cat` is the cheapest reader there is; the face log's own
// reader (lib/video/frame-reader.ts) hands I420 frames to a worker thread and on to the main thread.
// Measured the same way without the pipe (ffmpeg writing to /dev/null itself, which the kernel
// discards without copying), decoding takes 0.55-0.65 of the time (docs/benchmarks.md), so both
// are timed.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface DecodeBaseline {
  /** Wall-clock ms of ffmpeg decoding to BGR into a pipe that `cat` drains to /dev/null. */
  pipeMs: number;
  /** The same with ffmpeg's output going to /dev/null directly (no pipe). */
  devNullMs: number;
}

export async function decodeBaseline(file: string): Promise<DecodeBaseline> {
  return { pipeMs: await timeDecode(file, true), devNullMs: await timeDecode(file, false) };
}

function timeDecode(file: string, throughPipe: boolean): Promise<number> {
  const args = ['-v', 'error', '-nostdin', '-threads', '2', '-i', file, '-map', '0:v:0', '-f', 'rawvideo', '-pix_fmt', 'bgr24', 'pipe:1'];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const ffmpeg = spawn('ffmpeg', args, { stdio: ['ignore', throughPipe ? 'pipe' : 'ignore', 'inherit'] });
    // `ignore` is /dev/null: ffmpeg writes there itself. With a pipe, cat reads it (a kernel pipe
    // between the two processes; no byte passes through this one).
    const reader = throughPipe ? spawn('cat', [], { stdio: [ffmpeg.stdout!, 'ignore', 'inherit'] }) : null;
    let pending = throughPipe ? 2 : 1;
    const done = (what: string) => (code: number | null) => {
      if (code !== 0) reject(new Error(`${what} exited with ${code} decoding ${file}`));
      else if (--pending === 0) resolve(performance.now() - t0);
    };
    ffmpeg.on('error', reject).on('exit', done('ffmpeg'));
    reader?.on('error', reject).on('exit', done('cat'));
  });
}
