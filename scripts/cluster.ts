// `make cluster`: several appliances as one, on this machine. Three service nodes
// (`node build/lib/main.js`) share one job store, a private PostgreSQL server
// (testkit/postgres.ts, DATABASE_URL), and one data folder, ./data/cluster/shared (DATA_DIR), so
// a job submitted to one node may run on another and be read from any. Runs until Ctrl-C or
// SIGTERM: the nodes get SIGTERM and finish their running jobs, then PostgreSQL stops; a second
// Ctrl-C kills the nodes at once.
//
// Environment: CLUSTER_BASE_PORT (8081: the nodes listen on it and the next two ports),
// CLUSTER_WORKERS (1 worker process per node). Anything else in the environment (LOG_LEVEL, ...)
// reaches the nodes as it is.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';

const NODE_COUNT = 3;
const SHARED_DATA_DIR = path.resolve('data/cluster/shared');
const DEFAULT_BASE_PORT = 8081;
const DEFAULT_WORKERS = 1;
/** The nodes log warnings and errors only, unless LOG_LEVEL says otherwise: a readable demo. */
const DEFAULT_LOG_LEVEL = 'warn';
/** A node loads its models before it listens; this is far beyond that on a loaded machine. */
const START_TIMEOUT_MS = 60_000;

interface ClusterNode {
  id: string;
  port: number;
  child: ChildProcess;
  /** The URL the node printed once it listens; rejects when it exits first or takes too long. */
  listening: Promise<string>;
  /** Resolves once the node has exited and its output is read to the end. */
  closed: Promise<void>;
}

/** A positive whole number from the environment, or the default; exits naming the variable. */
function setting(name: string, fallback: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`configuration error: ${name}: expected a whole number from 1 to ${max}, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

/** Copies a stream's lines to `out`, each after the node's id. */
function forwardLines(stream: NodeJS.ReadableStream, id: string, out: NodeJS.WriteStream, onLine?: (line: string) => void): void {
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    out.write(`[${id}] ${line}\n`);
    onLine?.(line);
  });
}

function spawnNode(id: string, port: number, env: Record<string, string>): ClusterNode {
  const child = spawn(process.execPath, [path.resolve('build/lib/main.js')], {
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || DEFAULT_LOG_LEVEL, ...env, NODE_ID: id, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let onListening: (url: string) => void = () => {};
  forwardLines(child.stdout!, id, process.stdout);
  forwardLines(child.stderr!, id, process.stderr, (line) => {
    const match = /listening on (https?:\/\/\S+)/.exec(line);
    if (match) onListening(match[1]);
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${id} did not listen within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    onListening = (url) => {
      clearTimeout(timer);
      resolve(url);
    };
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${id} exited at start with ${code ?? signal}`));
    });
  });
  listening.catch(() => {});
  return { id, port, child, listening, closed };
}

async function main(): Promise<void> {
  const basePort = setting('CLUSTER_BASE_PORT', DEFAULT_BASE_PORT, 65535 - NODE_COUNT + 1);
  const workers = setting('CLUSTER_WORKERS', DEFAULT_WORKERS, 64);
  fs.mkdirSync(SHARED_DATA_DIR, { recursive: true });
  // Hex: nothing in it that a shell or the user:password list of AUTH_CREDENTIALS would split on.
  const credentials = `admin:${crypto.randomBytes(12).toString('hex')}`;

  const nodes: ClusterNode[] = [];
  let stopping = false;
  const postgresStarting: Promise<PrivatePostgres> = startPostgres();
  postgresStarting.catch(() => {});

  /** Stops the nodes (SIGTERM, then waits for them), then PostgreSQL, then this process. */
  const shutDown = async (reason: string, exitCode: number): Promise<void> => {
    if (stopping) {
      console.error(`${reason} again: killing the nodes`);
      for (const node of nodes) node.child.kill('SIGKILL');
      return;
    }
    stopping = true;
    console.error(`${reason}: stopping the nodes (again to kill them)`);
    for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGTERM');
    await Promise.all(nodes.map((node) => node.closed));
    console.error('stopping PostgreSQL');
    await postgresStarting.then((postgres) => postgres.stop(), () => {});
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutDown('SIGINT', 0));
  process.on('SIGTERM', () => void shutDown('SIGTERM', 0));

  let postgres: PrivatePostgres;
  try {
    postgres = await postgresStarting;
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
  if (stopping) return;
  console.error(`PostgreSQL: ${postgres.url} (log: ${postgres.logFile})`);

  const env = {
    DATABASE_URL: postgres.url,
    DATA_DIR: SHARED_DATA_DIR,
    AUTH_CREDENTIALS: credentials,
    HOST: '127.0.0.1',
    WORKERS: String(workers),
  };
  for (let i = 0; i < NODE_COUNT; i++) {
    const node = spawnNode(`node-${i + 1}`, basePort + i, env);
    nodes.push(node);
    node.child.on('exit', (code, signal) => {
      console.error(`[${node.id}] ${stopping ? 'stopped' : 'exited on its own'} (${signal ?? `code ${code}`})`);
    });
  }

  let urls: string[];
  try {
    urls = await Promise.all(nodes.map((node) => node.listening));
  } catch (err) {
    if (stopping) return;
    console.error(err instanceof Error ? err.message : err);
    return shutDown('a node did not start', 1);
  }
  if (stopping) return;
  const second = urls[1] ?? urls[0];
  console.log(
    [
      '',
      `${NODE_COUNT} nodes, one job store (PostgreSQL) and one data folder (${SHARED_DATA_DIR}):`,
      ...nodes.map((node, i) => `  ${node.id}  ${urls[i]}`),
      `credentials: ${credentials}`,
      `try:  curl -u ${credentials} ${second}/healthz`,
      'Ctrl-C stops the nodes, then PostgreSQL.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
