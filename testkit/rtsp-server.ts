// RTSP test cameras for tests and benches: testkit/rtsp/serve.py (GStreamer's RTSP server, run by
// Debian's python3; the Makefile installs both) in a child process, driven over its stdin. Each
// mount loops a stream file (testkit/stream-fixtures.ts) as a live camera does; a mount can be
// switched to another file, stalled (the handshake succeeds, no picture follows), added or removed
// while readers come and go, and the whole server stopped and started again on its port.
//
// The server never outlives its creator: stop() waits for its exit, a root-level mocha hook stops
// what a test left running, an 'exit' handler kills what a script left, and serve.py exits by
// itself when its stdin closes, which the kernel does when this process dies in any way.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

/** serve.py in the source tree (the build holds only the compiled TypeScript). */
export const SERVE_SCRIPT = fileURLToPath(new URL('../../testkit/rtsp/serve.py', import.meta.url));
/** Debian's python, which has the gi bindings; a python3 earlier on PATH may not. */
const PYTHON = '/usr/bin/python3';
/** serve.py is ready in well under a second; the first start after installing GStreamer builds its plugin registry (a few seconds). */
const READY_TIMEOUT_MS = 30_000;
/** serve.py answers a command at once; this only bounds a server that hangs. */
const COMMAND_TIMEOUT_MS = 10_000;
/** SIGTERM ends serve.py at once; SIGKILL after this long. */
const STOP_GRACE_MS = 5_000;
/** Characters of serve.py's stderr quoted when it fails. */
const STDERR_TAIL_CHARS = 2_000;

export interface RtspCredentials {
  user: string;
  password: string;
}

export interface RtspServerOptions {
  /** Mount name (the URL's path, e.g. `cam1` or `site/cam1`) -> the stream file it loops (H.264 in MPEG-TS). */
  mounts: Record<string, string>;
  /** Basic credentials every mount asks for; none: the mounts are open. */
  credentials?: RtspCredentials;
  /** The port to listen on; any free one when absent. */
  port?: number;
  /** The address to listen on. @defaultValue '127.0.0.1' */
  host?: string;
}

export interface RtspUrlOptions {
  /** true (the default): the server's credentials, if it has any; false: none; or these ones. */
  credentials?: boolean | RtspCredentials;
}

export interface RtspMountStatus {
  file: string;
  stalled: boolean;
  /** Pipelines serving readers now: the readers of one mount share one. */
  pipelines: number;
}

export interface RtspServer {
  readonly host: string;
  /** The port, the same across stop() and restart(). */
  readonly port: number;
  /** serve.py's process id while it runs. */
  readonly pid: number | undefined;
  /** rtsp://[user:password@]host:port/mount */
  url(mount: string, options?: RtspUrlOptions): string;
  /** Readers connecting from now on get `file`; current readers keep what they get. */
  switchMount(mount: string, file: string): Promise<void>;
  /** Readers get OPTIONS, DESCRIBE, SETUP and PLAY answered, then no picture; current readers stop receiving too. */
  stall(mount: string): Promise<void>;
  /** Readers connecting from now on get pictures again; a stalled session stays stalled. */
  resume(mount: string): Promise<void>;
  addMount(mount: string, file: string): Promise<void>;
  /** Readers connecting from now on get 404; current readers keep their stream until they leave. */
  removeMount(mount: string): Promise<void>;
  status(): Promise<Record<string, RtspMountStatus>>;
  /** Ends the server and waits for its exit: the port is free and readers get connection refused. Harmless when stopped. */
  stop(): Promise<void>;
  /** Stops the server if it runs and starts it again on the same port, with the mounts and files of now, none stalled. */
  restart(): Promise<void>;
}

/** Servers started and not stopped, for the hooks below. */
const running = new Set<CameraServer>();

/** Starts serve.py with the mounts; resolves once it listens. */
export async function startRtspServer(options: RtspServerOptions): Promise<RtspServer> {
  const server = new CameraServer(options);
  stopAllAtExit();
  await server.launch(options.port ?? 0);
  return server;
}

// A root-level hook (this module is first imported while mocha loads a test file): a server that a
// test left running stops when the run ends. Scripts that import this module outside mocha have no `after`.
if (typeof after === 'function') {
  after(async () => {
    await Promise.all([...running].map((server) => server.stop()));
  });
}

let exitHookInstalled = false;

/** A last resort for a process that ends without stopping its servers (a script's own exit). */
function stopAllAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const server of running) server.killAtExit();
  });
}

interface Answer {
  id?: number;
  ok: boolean;
  error?: string;
  [field: string]: unknown;
}

interface Waiting {
  resolve(answer: Answer): void;
  reject(err: Error): void;
}

class CameraServer implements RtspServer {
  readonly host: string;
  port = 0;
  /** The mounts as serve.py has them, so that restart() starts with them. */
  private readonly mounts: Map<string, string>;
  private readonly credentials: RtspCredentials | undefined;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stderr = '';
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private stopping: Promise<void> | null = null;

  constructor(options: RtspServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.mounts = new Map(Object.entries(options.mounts));
    this.credentials = options.credentials;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  url(mount: string, options: RtspUrlOptions = {}): string {
    const wanted = options.credentials ?? true;
    const credentials = wanted === true ? this.credentials : wanted === false ? undefined : wanted;
    const userinfo = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@` : '';
    return `rtsp://${userinfo}${this.host}:${this.port}/${mount}`;
  }

  async switchMount(mount: string, file: string): Promise<void> {
    await this.command({ op: 'switch', mount, file });
    this.mounts.set(mount, file);
  }

  async stall(mount: string): Promise<void> {
    await this.command({ op: 'stall', mount });
  }

  async resume(mount: string): Promise<void> {
    await this.command({ op: 'resume', mount });
  }

  async addMount(mount: string, file: string): Promise<void> {
    await this.command({ op: 'add', mount, file });
    this.mounts.set(mount, file);
  }

  async removeMount(mount: string): Promise<void> {
    await this.command({ op: 'remove', mount });
    this.mounts.delete(mount);
  }

  async status(): Promise<Record<string, RtspMountStatus>> {
    return (await this.command({ op: 'status' })).mounts as Record<string, RtspMountStatus>;
  }

  stop = (): Promise<void> => {
    this.stopping ??= this.terminate().finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  };

  async restart(): Promise<void> {
    await this.stop();
    await this.launch(this.port);
  }

  /** Starts serve.py on `port` (0: any) and waits for its ready line. */
  async launch(port: number): Promise<void> {
    const args = [SERVE_SCRIPT, '--address', this.host, '--port', String(port)];
    for (const [mount, file] of this.mounts) args.push('--mount', `${mount}=${file}`);
    // The credentials travel in the environment, not on a command line that `ps` shows. Another
    // python's module paths would shadow Debian's gi.
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['RTSP_USER', 'RTSP_PASSWORD', 'PYTHONPATH', 'PYTHONHOME']) delete env[name];
    if (this.credentials) Object.assign(env, { RTSP_USER: this.credentials.user, RTSP_PASSWORD: this.credentials.password });

    const child = spawn(PYTHON, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.stderr = '';
    running.add(this);
    child.stderr!.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A write after serve.py died fails with EPIPE; the exit below reports it.
    child.stdin!.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.on('close', () => {
        if (this.child === child) this.child = null;
        running.delete(this);
        for (const waiting of this.waiting.values()) waiting.reject(this.failure('serve.py exited'));
        this.waiting.clear();
        resolve();
      });
    });

    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<number>((resolve, reject) => {
      timer = setTimeout(() => reject(this.failure(`serve.py was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      child.on('error', (err) => reject(err));
      this.exited.then(() => reject(this.failure(`serve.py exited with ${child.exitCode ?? child.signalCode} before it was ready`)));
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        const message = parseLine(line);
        if (message?.event === 'ready') {
          resolve(Number(message.port));
        } else if (message && typeof message.id === 'number') {
          this.waiting.get(message.id)?.resolve(message as Answer);
          this.waiting.delete(message.id);
        }
      });
    });
    try {
      this.port = await ready;
    } catch (err) {
      await this.terminate();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Best effort from the process's 'exit' handler, where nothing asynchronous runs any more. */
  killAtExit(): void {
    this.child?.kill('SIGKILL');
  }

  private async terminate(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private async command(fields: Record<string, unknown>): Promise<Answer> {
    const child = this.child;
    if (!child) throw new Error(`the RTSP server on port ${this.port} is stopped`);
    const id = this.nextId++;
    const answer = await new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(this.failure(`serve.py did not answer ${fields.op} within ${COMMAND_TIMEOUT_MS} ms`));
      }, COMMAND_TIMEOUT_MS);
      this.waiting.set(id, {
        resolve: (a) => (clearTimeout(timer), resolve(a)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      child.stdin!.write(JSON.stringify({ id, ...fields }) + '\n');
    });
    if (!answer.ok) throw new Error(`RTSP server: ${fields.op} failed: ${answer.error}`);
    return answer;
  }

  private failure(what: string): Error {
    const tail = this.stderr.trim();
    return new Error(tail ? `${what}:\n${tail}` : what);
  }
}

function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line);
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}
