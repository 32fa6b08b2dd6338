// Starting the real service for tests: in this process (HTTP in-process, analytics in real
// worker processes) or as a separate `node build/lib/main.js` process that tests may kill.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../lib/config.js';
import { startService, type RunningService, type ServiceOptions } from '../lib/service.js';
import { checkResponse } from './openapi-check.js';

export const USER = 'tester';
/**
 * Tests send wrong credentials on purpose, all from 127.0.0.1: the sign-in throttle is off unless
 * a test sets its limits (test/77 tests it with the defaults).
 */
export const NO_SIGN_IN_LIMITS = { SIGN_IN_LIMIT_PER_ADDRESS: 'none', SIGN_IN_LIMIT_PER_USER: 'none' };
export const PASSWORD = 'correct horse battery staple';
export const AUTH = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

/** Folders made by tempDataDir() and not yet removed. */
const tempDirs = new Set<string>();

/**
 * A new empty folder in the system tmp folder. It is removed by removeTempDir(), by the stop() of
 * the TestService that made it, or at the latest when the whole run ends (the root hook below).
 */
export function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-test-'));
  tempDirs.add(dir);
  return dir;
}

/** Removes a folder and all it holds (a service's workers may still be letting go of files). */
export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  tempDirs.delete(dir);
}

// A root-level hook (this module is first imported while mocha loads a test file): whatever a
// test left behind, for instance when it failed before its own clean-up, goes when the run ends.
// Scripts that import these helpers outside mocha have no `after`.
if (typeof after === 'function') {
  after(() => {
    for (const dir of tempDirs) removeTempDir(dir);
  });
}

export interface TestService {
  url: string;
  dataDir: string;
  service: RunningService;
  /** Log lines, parsed. */
  logs: Record<string, unknown>[];
  /** Stops the service; removes dataDir when startTestService made it. */
  stop(): Promise<void>;
}

/**
 * Starts the service on `dataDir`, or on a new temporary folder that its stop() removes. A folder
 * passed in is the caller's: it outlives stop(), so that a test can start the service on it again.
 */
export async function startTestService(
  env: Record<string, string> = {},
  givenDataDir?: string,
  options: ServiceOptions = {},
): Promise<TestService> {
  const dataDir = givenDataDir ?? tempDataDir();
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    AUTH_CREDENTIALS: `${USER}:${PASSWORD}`,
    WORKERS: '1',
    ...NO_SIGN_IN_LIMITS,
    ...env,
  });
  const service = await startService(config, pino({ level: 'debug' }, sink), options);
  return {
    url: service.url,
    dataDir,
    service,
    logs,
    stop: async () => {
      await service.stop(2000);
      if (givenDataDir === undefined) removeTempDir(dataDir);
    },
  };
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | string>;
}

/** Runs `node build/lib/main.js` as a child process and waits until it listens. */
export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [path.resolve('build/lib/main.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...NO_SIGN_IN_LIMITS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${text}`)), 20_000);
    const check = () => {
      const m = /listening on (https?:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stderr!.on('data', check);
    child.on('exit', () => reject(new Error(`service exited at start:\n${text}`)));
  });
  return { url, child, output: () => text, exited };
}

/**
 * Makes an interrupted bench (Ctrl-C, kill) end its service first: the service is a process of
 * its own, whose workers would otherwise go on with their jobs and spoil the next run's figures.
 * SIGKILL, since a SIGTERM waits for the running jobs (a long video's, an hour); the workers end
 * when their service does.
 */
export function stopServiceOnSignals(service: ServiceProcess, dir: string): void {
  const stop = async (signal: NodeJS.Signals) => {
    service.child.kill('SIGKILL');
    await service.exited;
    fs.rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, (s) => void stop(s));
}

/** A multipart form of files (field -> path) and plain fields. */
export function form(files: Record<string, string>, fields: Record<string, string> = {}): FormData {
  const fd = new FormData();
  for (const [field, file] of Object.entries(files)) {
    fd.append(field, new Blob([fs.readFileSync(file)]), path.basename(file));
  }
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  return fd;
}

/** A request with the test credentials (unless `auth` says otherwise); the response is checked against the OpenAPI document. */
export async function api(
  url: string,
  init: RequestInit & { auth?: string | null } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers = new Headers(init.headers);
  if (init.auth !== null) headers.set('authorization', init.auth ?? AUTH);
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  checkResponse({ method: init.method ?? 'GET', url, status: res.status, headers: res.headers, body });
  return { status: res.status, headers: res.headers, body };
}

/**
 * fetch() as it is (no credentials added), for downloads such as signed result links; the
 * response is checked against the OpenAPI document like api()'s. The body comes back as bytes.
 */
export async function fetchChecked(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  const parsed = type.includes('json') && body.length ? JSON.parse(body.toString('utf8')) : body.length ? body.toString('latin1') : undefined;
  checkResponse({ method: init.method ?? 'GET', url, status: res.status, headers: res.headers, body: parsed });
  return { status: res.status, headers: res.headers, body };
}

/** Polls a task until complete or the deadline. */
export async function waitComplete(url: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api(url);
    if (body?.task?.complete) return body.task;
    if (Date.now() > deadline) throw new Error(`task not complete after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
