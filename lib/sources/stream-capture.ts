// Reading up to 25 consecutive frames from a camera's stream: ffmpeg decodes (RTSP over TCP, or an
// HTTP MJPEG/HLS/MP4 stream) and writes YUV4MPEG to a pipe, whose header gives the picture size;
// frames arrive as I420 (yuv-frame.ts), without a file in between. Connecting and reading are
// bounded: no frame within the timeout, or no whole clip within twice it, ends the attempt, and
// ffmpeg is killed and waited for. Failures carry a reason an operator can act on.
import { spawn } from 'node:child_process';
import { YuvFrame } from '../video/yuv-frame.js';
import { redactSourceUrl, redactText } from './redact.js';
import { SourceFailure } from './source-failure.js';

/** Protocols ffmpeg may open for a source: an HLS playlist must not lead it to `file:` or `concat:`. */
const PROTOCOLS = 'rtsp,rtsps,rtp,srtp,udp,tcp,tls,http,https,httpproxy,crypto';

export interface CaptureOptions {
  url: string;
  maxFrames: number;
  /** No frame within this (connecting included) fails the attempt; the whole clip may take twice it. */
  timeoutMs: number;
  /** Each frame as it arrives (numbered from 0); the frame's bytes are its own. */
  onFrame: (frame: YuvFrame, index: number) => void;
}

export interface Capture {
  frames: number;
  width: number;
  height: number;
  /** When the first frame arrived, ms. */
  at: number;
}

/** Frames fewer than this after the time is up are no clip (the frozen-feed check needs several). */
const MIN_FRAMES = 2;

export function ffmpegCaptureArgs(url: string, maxFrames: number, timeoutMs: number): string[] {
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase();
  const micros = String(timeoutMs * 1000);
  const input = scheme.startsWith('rtsp') ? ['-rtsp_transport', 'tcp', '-timeout', micros] : ['-rw_timeout', micros];
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error',
    '-protocol_whitelist', PROTOCOLS,
    ...input,
    '-i', url,
    '-map', '0:v:0', '-an', '-sn', '-dn',
    '-frames:v', String(maxFrames),
    '-vsync', 'passthrough',
    '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe', 'pipe:1',
  ];
}

export function captureStream(o: CaptureOptions): Promise<Capture> {
  const child = spawn('ffmpeg', ffmpegCaptureArgs(o.url, o.maxFrames, o.timeoutMs), { stdio: ['ignore', 'pipe', 'pipe'] });
  const parser = new Y4mParser();
  let stderr = '';
  let frames = 0;
  let at = 0;
  let timedOut = false;
  let failure: Error | null = null;

  return new Promise<Capture>((resolve, reject) => {
    const stop = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    let idle = setTimeout(onTimeout, o.timeoutMs);
    const whole = setTimeout(onTimeout, 2 * o.timeoutMs);
    function onTimeout() {
      timedOut = true;
      stop();
    }
    child.stdout.on('data', (chunk: Buffer) => {
      if (failure) return;
      try {
        for (const frame of parser.push(chunk)) {
          if (frames === 0) at = Date.now();
          o.onFrame(frame, frames++);
          clearTimeout(idle);
          idle = setTimeout(onTimeout, o.timeoutMs);
        }
      } catch (err) {
        failure = err as Error;
        stop();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => {
      failure ??= new Error(`ffmpeg cannot be started: ${err.message}`);
    });
    child.on('close', (code) => {
      clearTimeout(idle);
      clearTimeout(whole);
      if (failure) return reject(failure);
      const header = parser.header;
      if (header && frames >= MIN_FRAMES && (code === 0 || timedOut)) return resolve({ frames, width: header.width, height: header.height, at });
      if (header && frames > 0 && code === 0) return resolve({ frames, width: header.width, height: header.height, at });
      reject(classify(o.url, stderr, timedOut, frames));
    });
  });
}

/** A failed attempt as a reason, from what ffmpeg said (the URL's password never reaches the message). */
export function classify(url: string, stderr: string, timedOut: boolean, frames: number): SourceFailure {
  const where = redactSourceUrl(url);
  const said = redactText(stderr).split('\n').map((l) => l.trim()).filter(Boolean);
  // ffmpeg names the URL before its complaint: the message names it once already.
  const last = said.length > 0 ? said[said.length - 1].replace(url, where).replace(`${where}: `, '') : '';
  const detail = last ? `: ${last.slice(0, 300)}` : '';
  const text = stderr.toLowerCase();
  if (/401|unauthori[sz]ed|authentication/.test(text)) return new SourceFailure('authentication_failed', `the stream ${where} refused the credentials${detail}`);
  if (text.includes('connection refused')) return new SourceFailure('connection_refused', `the stream ${where} refused the connection${detail}`);
  if (/404|not found/.test(text)) return new SourceFailure('not_found', `the stream ${where} does not exist on the server${detail}`);
  if (/name or service not known|failed to resolve|no route to host|network is unreachable|host is unreachable|temporary failure in name resolution/.test(text)) {
    return new SourceFailure('unreachable', `the host of ${where} cannot be reached${detail}`);
  }
  if (timedOut || /timed out|timeout/.test(text)) {
    return new SourceFailure('timeout', frames > 0 ? `the stream ${where} stopped after ${frames} frame(s)` : `the stream ${where} gave no picture in time`);
  }
  if (/matches no streams|does not contain any stream|no video|could not find codec parameters/.test(text) || (frames === 0 && said.length === 0)) {
    return new SourceFailure('no_video_stream', `the stream ${where} has no video${detail}`);
  }
  return new SourceFailure('stream_error', `the stream ${where} cannot be read${detail}`);
}

/**
 * YUV4MPEG2 as ffmpeg writes it: one header line (`YUV4MPEG2 W768 H576 F25:1 ... C420jpeg`), then
 * per frame a `FRAME` line and the three planes.
 */
export class Y4mParser {
  header: { width: number; height: number } | null = null;
  private chunks: Buffer[] = [];
  private length = 0;
  /** Bytes needed before the next look: chunks are joined once per frame, not once per chunk. */
  private need = 1;

  push(chunk: Buffer): YuvFrame[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const out: YuvFrame[] = [];
    while (this.length >= this.need) {
      const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.length);
      this.chunks = [buf];
      const eol = buf.indexOf(0x0a);
      if (eol < 0) {
        if (buf.length > 4096) throw new Error('ffmpeg wrote no YUV4MPEG line');
        this.need = buf.length + 1;
        break;
      }
      const line = buf.subarray(0, eol).toString('latin1');
      let end = eol + 1;
      if (!this.header) {
        const w = /\bW(\d+)/.exec(line);
        const h = /\bH(\d+)/.exec(line);
        const c = /\bC(\S+)/.exec(line);
        if (!line.startsWith('YUV4MPEG2') || !w || !h) throw new Error(`ffmpeg wrote no YUV4MPEG header: ${line.slice(0, 80)}`);
        if (c && !c[1].startsWith('420')) throw new Error(`ffmpeg wrote ${c[1]} frames, not 4:2:0`);
        this.header = { width: Number(w[1]), height: Number(h[1]) };
      } else {
        if (!line.startsWith('FRAME')) throw new Error(`unexpected YUV4MPEG data: ${line.slice(0, 40)}`);
        end += YuvFrame.bytes(this.header.width, this.header.height);
        if (buf.length < end) {
          this.need = end;
          break;
        }
        // A copy: the frame outlives the chunk it came in.
        out.push(new YuvFrame(Buffer.from(buf.subarray(eol + 1, end)), this.header.width, this.header.height));
      }
      const rest = buf.subarray(end);
      this.chunks = [rest];
      this.length = rest.length;
      this.need = 1;
    }
    return out;
  }
}
