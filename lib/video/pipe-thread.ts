// One thread per process that runs the ffmpeg children of frame-reader.ts and video-encoder.ts
// (pipe-thread-worker.ts). Why a thread: raw frames are larger than a pipe's 64 KB buffer (1.4 MB
// at 720p), so a decoder can only run ahead, and an encoder only take a frame, while someone
// empties or fills its pipe. On the main thread that someone is the event loop, which a face
// log keeps busy in synchronous OpenCV calls for tens of ms: on a 720p bench video, the main
// thread would spend 30% of its time waiting for the decoder (19%) and the encoder (12%). The thread
// only moves bytes (it never loads OpenCV, which is not safe in several threads) and hands whole
// frames over as transferred ArrayBuffers.
import { Worker } from 'node:worker_threads';
import type { PipeEvent, PipeRequest } from './pipe-messages.js';

export interface PipeStream {
  readonly id: number;
  send(request: PipeRequest, transfer?: ArrayBuffer[]): void;
  /** Stops receiving this stream's events (after its exit). */
  close(): void;
}

let worker: Worker | null = null;
let nextId = 1;
const handlers = new Map<number, (event: PipeEvent) => void>();

/**
 * A new stream on the process's pipe thread (started on first use); `onEvent` gets its events.
 * The thread keeps the process alive only while a stream is open.
 */
export function openPipeStream(onEvent: (event: PipeEvent) => void): PipeStream {
  const w = thread();
  const id = nextId++;
  handlers.set(id, onEvent);
  w.ref();
  return {
    id,
    send: (request, transfer = []) => w.postMessage(request, transfer),
    close: () => {
      handlers.delete(id);
      if (handlers.size === 0) w.unref();
    },
  };
}

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('./pipe-thread-worker.js', import.meta.url));
  w.on('message', (event: PipeEvent) => handlers.get(event.id)?.(event));
  // The thread died (a bug, or out of memory): every open stream fails as if its ffmpeg had.
  const fail = (message: string) => {
    if (worker === w) worker = null;
    for (const [id, handler] of [...handlers]) handler({ op: 'exit', id, code: null, stderr: '', error: { message } });
  };
  w.on('error', (err) => fail(`the pipe thread failed: ${err.message}`));
  w.on('exit', (code) => fail(`the pipe thread exited with code ${code}`));
  w.unref();
  return (worker = w);
}
