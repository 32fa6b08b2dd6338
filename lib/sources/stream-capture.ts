// Cutting a clip of up to 25 consecutive frames from a camera's stream, in the service process:
// ffmpeg reads the stream (RTSP over TCP, or an HTTP MJPEG/HLS/MP4 stream) and copies its video
// packets into an MP4 without decoding them. Stream copy starts at a key frame (ffmpeg drops the
// frames before the first one), so the clip decodes on its own; the worker then decodes and
// checks it exactly as an uploaded clip. A capture costs the service an ffmpeg start (about 100 ms of CPU) and waits on the
// camera, not on a worker. Connecting and reading are bounded: no packet within the timeout, or
// no whole clip within twice it, fails the attempt; ffmpeg is killed and waited for.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { redactSourceUrl, redactText } from './redact.js';
import { SourceFailure } from './source-failure.js';

/** Protocols ffmpeg may open for a source: an HLS playlist must not lead it to `file:` or `concat:`. */
const PROTOCOLS = 'rtsp,rtsps,rtp,srtp,udp,tcp,tls,http,https,httpproxy,crypto';

export interface CaptureOptions {
  url: string;
  /** Where the clip goes (an MP4); removed when the capture fails. */
  file: string;
  maxFrames: number;
  /** No data within this (connecting included) fails the attempt; the whole clip may take twice it. */
  timeoutMs: number;
}

export function ffmpegCaptureArgs(o: CaptureOptions): string[] {
  const scheme = o.url.slice(0, o.url.indexOf(':')).toLowerCase();
  const micros = String(o.timeoutMs * 1000);
  const input = scheme.startsWith('rtsp') ? ['-rtsp_transport', 'tcp', '-timeout', micros] : ['-rw_timeout', micros];
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error', '-y',
    '-protocol_whitelist', PROTOCOLS,
    ...input,
    '-i', o.url,
    '-map', '0:v:0', '-an', '-sn', '-dn',
    '-c', 'copy',
    '-frames:v', String(o.maxFrames),
    '-f', 'mp4', o.file,
  ];
}

/** Captures a clip into `o.file`; resolves with when the capture started (ms), or throws a SourceFailure. */
export function captureClip(o: CaptureOptions): Promise<{ startedAt: number }> {
  const startedAt = Date.now();
  const child = spawn('ffmpeg', ffmpegCaptureArgs(o), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let timedOut = false;
  let spawnError: Error | null = null;
  return new Promise((resolve, reject) => {
    const kill = () => {
      timedOut = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    // ffmpeg's own socket timeout covers a silent connection; this covers a stream that trickles.
    const whole = setTimeout(kill, 2 * o.timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => (spawnError = err));
    child.on('close', async (code) => {
      clearTimeout(whole);
      const size = await fs.stat(o.file).then((s) => s.size, () => 0);
      if (code === 0 && !timedOut && size > 0) return resolve({ startedAt });
      await fs.rm(o.file, { force: true });
      if (spawnError) return reject(new Error(`ffmpeg cannot be started: ${(spawnError as Error).message}`));
      reject(classify(o.url, stderr, timedOut || code === null, code === 0));
    });
  });
}

/** A failed attempt as a reason, from what ffmpeg said (the URL's password never reaches the message). */
export function classify(url: string, stderr: string, timedOut: boolean, emptyClip = false): SourceFailure {
  const where = redactSourceUrl(url);
  const said = redactText(stderr)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  // ffmpeg names the URL before its complaint: the message names it once already.
  const last = said.length > 0 ? said[said.length - 1].replace(url, where).replace(`${where}: `, '') : '';
  const detail = last ? `: ${last.slice(0, 300)}` : '';
  // Matched without the URL: its port, path or password may hold "401" or "404".
  const text = redactText(stderr.split(url).join('')).split(where).join('').toLowerCase();
  if (/\b401\b|unauthori[sz]ed|authentication failed|authorization failed/.test(text)) return new SourceFailure('authentication_failed', `the stream ${where} refused the credentials${detail}`);
  if (text.includes('connection refused')) return new SourceFailure('connection_refused', `the stream ${where} refused the connection${detail}`);
  if (/\b404\b|not found/.test(text)) return new SourceFailure('not_found', `the stream ${where} does not exist on the server${detail}`);
  if (/name or service not known|failed to resolve|no route to host|network is unreachable|host is unreachable|temporary failure in name resolution/.test(text)) {
    return new SourceFailure('unreachable', `the host of ${where} cannot be reached${detail}`);
  }
  if (timedOut || /timed out|timeout/.test(text)) return new SourceFailure('timeout', `the stream ${where} gave no clip in time`);
  if (emptyClip || /matches no streams|does not contain any stream|no video|could not find codec parameters/.test(text) || said.length === 0) {
    return new SourceFailure('no_video_stream', `the stream ${where} has no video${detail}`);
  }
  return new SourceFailure('stream_error', `the stream ${where} cannot be read${detail}`);
}
