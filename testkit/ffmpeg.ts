// ffmpeg run to completion for test media and bench videos: errors only, to the caller's stderr.
import { execFileSync } from 'node:child_process';

export function ffmpeg(args: string[]): void {
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
}
