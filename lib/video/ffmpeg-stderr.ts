// What ffmpeg and ffprobe say on stderr, cut down to what an API client can use.

/**
 * The first non-blank line, without the `[demuxer @ 0x...]` prefix and the `path/to/file:` prefix
 * that ffmpeg and ffprobe put before it: clients need neither, and the path is a server path.
 */
export function firstStderrLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line
    .replace(/^\[[^\]]*\]\s*/, '')
    .replace(/^\S*\/\S*:\s*/, '')
    .trim();
}
