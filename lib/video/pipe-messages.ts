// Messages between a process's main thread and its pipe thread (pipe-thread.ts): the thread runs
// the ffmpeg children of frame-reader.ts and video-encoder.ts and moves whole raw frames through
// their pipes, handing them over as transferred ArrayBuffers (no copy).

/** Main thread -> pipe thread. */
export type PipeRequest =
  /** Start a decoder: ffmpeg with `args` writing raw frames of `frameBytes` to its stdout. */
  | { op: 'read'; id: number; args: string[]; frameBytes: number; ahead: number }
  /** The main thread took one frame of decoder `id`: one more may be read ahead. */
  | { op: 'took'; id: number }
  /** Start an encoder: ffmpeg with `args` reading raw frames from its stdin. */
  | { op: 'encode'; id: number; args: string[] }
  /** One frame for encoder `id` (transferred). */
  | { op: 'frame'; id: number; data: ArrayBuffer }
  /** No more frames for encoder `id`: close its stdin and report when it exits. */
  | { op: 'end'; id: number }
  /** Kill the ffmpeg of stream `id` (decoder or encoder). */
  | { op: 'kill'; id: number };

/** Pipe thread -> main thread. */
export type PipeEvent =
  /** One whole frame from decoder `id` (transferred). */
  | { op: 'frame'; id: number; data: ArrayBuffer }
  /** Encoder `id` has written one more frame into its pipe. */
  | { op: 'written'; id: number }
  /**
   * The ffmpeg of stream `id` exited (a decoder after its last frame): its exit code, the start
   * of its stderr, and the error that stopped it from starting or its pipe from being written.
   */
  | { op: 'exit'; id: number; code: number | null; stderr: string; error?: { message: string; code?: string } };
