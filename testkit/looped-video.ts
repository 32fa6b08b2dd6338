// Long test videos made from short ones: joined into one H.264 segment (re-encoded, since the
// sources' headers differ), then looped by stream copy, which costs no encoding however long.
import fs from 'node:fs';
import { ffmpeg } from './ffmpeg.js';

/** x264 veryfast, CRF 23, a keyframe every 2 s like a camera's: segments of one encoder join by stream copy. */
export function segmentEncoding(fps: number): string[] {
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-g', String(2 * fps), '-pix_fmt', 'yuv420p', '-movflags', '+faststart'];
}

/** `files` one after the other into `file` at `fps`, through a temporary file. */
export function joinVideos(files: string[], file: string, fps: number): void {
  // The concat filter decodes each file with its own parameters.
  const graph = `${files.map((_, i) => `[${i}:v:0]`).join('')}concat=n=${files.length}:v=1:a=0,fps=${fps}[v]`;
  ffmpeg([...files.flatMap((f) => ['-i', f]), '-filter_complex', graph, '-map', '[v]', ...segmentEncoding(fps), `${file}.tmp.mp4`]);
  fs.renameSync(`${file}.tmp.mp4`, file);
}

/** `segment` `copies` times over into `file` by stream copy, cut at `frames` if given. */
export function loopVideo(segment: string, copies: number, file: string, frames?: number): void {
  const list = `${file}.txt`;
  fs.writeFileSync(list, `file '${segment.replace(/'/g, "'\\''")}'\n`.repeat(copies));
  const cut = frames === undefined ? [] : ['-frames:v', String(frames)];
  ffmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-map', '0:v:0', '-c', 'copy', ...cut, '-movflags', '+faststart', `${file}.tmp.mp4`]);
  fs.rmSync(list);
  fs.renameSync(`${file}.tmp.mp4`, file);
}
