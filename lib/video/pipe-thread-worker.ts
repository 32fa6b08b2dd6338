// The pipe thread (see pipe-thread.ts): runs the ffmpeg children of the process's decoders and
// encoders and moves raw frames through their pipes on its own event loop, so that ffmpeg keeps
// decoding ahead and encoding behind while the main thread is busy in a long synchronous OpenCV
// call. Frame buffers go back and forth as transferred ArrayBuffers; an encoder's written frames
// are reused for the next decoded ones. It never loads OpenCV.
import { spawn, type ChildProcess } from 'node:child_process';
import { parentPort } from 'node:worker_threads';
import type { PipeEvent, PipeRequest } from './pipe-messages.js';

/** Bytes of ffmpeg's stderr kept for the error message. */
const STDERR_LIMIT = 4000;
/** Spare frame buffers kept per frame size for the next decoded frames. */
const POOL_LIMIT = 8;

const port = parentPort!;
const streams = new Map<number, { child: ChildProcess; resume?: () => void }>();
const pool = new Map<number, ArrayBuffer[]>();

function post(event: PipeEvent, transfer: ArrayBuffer[] = []): void {
  port.postMessage(event, transfer);
}

function buffer(bytes: number): ArrayBuffer {
  return pool.get(bytes)?.pop() ?? new ArrayBuffer(bytes);
}

function recycle(data: ArrayBuffer): void {
  const free = pool.get(data.byteLength) ?? [];
  if (free.length < POOL_LIMIT) free.push(data);
  pool.set(data.byteLength, free);
}

/** Starts ffmpeg for stream `id`; reports its exit (with stderr and any pipe error) once. */
function start(id: number, args: string[], stdio: ['ignore', 'pipe', 'pipe'] | ['pipe', 'ignore', 'pipe']): ChildProcess {
  const child = spawn('ffmpeg', args, { stdio });
  let stderr = '';
  let error: { message: string; code?: string } | undefined;
  const fail = (err: NodeJS.ErrnoException) => (error ??= { message: err.message, code: err.code });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += d;
  });
  child.on('error', fail);
  child.stdin?.on('error', fail);
  child.on('close', (code) => {
    streams.delete(id);
    if (streams.size === 0) pool.clear();
    post({ op: 'exit', id, code, stderr, error });
  });
  streams.set(id, { child });
  return child;
}

function read(id: number, args: string[], frameBytes: number, ahead: number): void {
  const child = start(id, args, ['ignore', 'pipe', 'pipe']);
  const stdout = child.stdout!;
  let frame = new Uint8Array(buffer(frameBytes));
  let filled = 0;
  let inFlight = 0;
  streams.get(id)!.resume = () => {
    inFlight--;
    if (stdout.isPaused() && inFlight < ahead) stdout.resume();
  };
  stdout.on('data', (chunk: Buffer) => {
    let offset = 0;
    while (offset < chunk.length) {
      const n = Math.min(frameBytes - filled, chunk.length - offset);
      frame.set(chunk.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
      if (filled === frameBytes) {
        const data = frame.buffer as ArrayBuffer;
        post({ op: 'frame', id, data }, [data]);
        frame = new Uint8Array(buffer(frameBytes));
        filled = 0;
        if (++inFlight >= ahead) stdout.pause();
      }
    }
  });
}

function write(id: number, data: ArrayBuffer): void {
  const stdin = streams.get(id)?.child.stdin;
  if (!stdin || stdin.destroyed) {
    post({ op: 'written', id });
    return;
  }
  stdin.write(Buffer.from(data), () => {
    recycle(data);
    post({ op: 'written', id });
  });
}

port.on('message', (m: PipeRequest) => {
  switch (m.op) {
    case 'read':
      return read(m.id, m.args, m.frameBytes, m.ahead);
    case 'took':
      return streams.get(m.id)?.resume?.();
    case 'encode':
      return void start(m.id, m.args, ['pipe', 'ignore', 'pipe']);
    case 'frame':
      return write(m.id, m.data);
    case 'end':
      return void streams.get(m.id)?.child.stdin?.end();
    case 'kill': {
      const child = streams.get(m.id)?.child;
      if (child && child.exitCode === null) child.kill('SIGKILL');
      return;
    }
  }
});
