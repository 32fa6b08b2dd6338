// A private PostgreSQL server for tests, benches and the cluster demo: a cluster of its own in a
// new temporary folder, listening on 127.0.0.1 and a free port, whose superuser `vaa` has a random
// password, so the DATABASE_URL it hands out is the only way in. It runs the server binaries of
// the Debian package `postgresql` (the Makefile installs it); Debian's own `main` cluster on port
// 5432, if any, is never used.
//
// Every tool runs as a child process that does not block: tests serve HTTP from the same process.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

/** Debian installs each major version's server binaries in /usr/lib/postgresql/<major>/bin. */
const PG_LIB = '/usr/lib/postgresql';
/** The temporary folders' names, and the file in each that names the process that made it. */
const TEMP_PREFIX = 'vaa-pg-';
const CREATOR_FILE = 'creator.pid';
/** The superuser initdb creates and the database the URL names. */
const USER = 'vaa';
const DATABASE = 'vaa';
/** Room for the load bench: a 200-connection burst on 3 nodes, each holding a pool besides. */
const MAX_CONNECTIONS = 300;
/** Enough for test data sets; PostgreSQL's default (128MB) per test cluster would be wasteful. */
const SHARED_BUFFERS = '32MB';
/** Seconds pg_ctl waits for a start or a stop; a fresh cluster starts in well under one. */
const PG_CTL_WAIT_S = 60;
/** Another free port is tried when the one picked was taken before the server could bind it. */
const PORT_TRIES = 5;
/** Lines of the server log quoted when the server does not start. */
const LOG_TAIL_LINES = 30;

export interface PrivatePostgres {
  /** postgres://vaa:<password>@127.0.0.1:<port>/vaa */
  readonly url: string;
  readonly port: number;
  /** The cluster's data directory (PGDATA), inside the temporary folder that stop() removes. */
  readonly dataDir: string;
  /** The server's log, beside dataDir. */
  readonly logFile: string;
  /** Fast shutdown, then removes the temporary folder. Later calls return the same promise. */
  stop(): Promise<void>;
  /** Fast shutdown and start on the same port; resolves once the server accepts connections. */
  restart(): Promise<void>;
  /** Immediate shutdown, as in a crash, for outage tests; start() brings the server back. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
}

export interface PostgresOptions {
  /** The port to listen on; a free one is picked when absent. */
  port?: number;
}

/** A system user's ids, for the child processes to run as. */
interface Account {
  uid: number;
  gid: number;
}

/** Servers started and not yet stopped, for the hooks below. */
const running = new Set<Cluster>();

/** Starts a new private PostgreSQL server with an empty database `vaa`. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PrivatePostgres> {
  const binDir = findBinDir();
  const account = serverAccount();
  await removeOrphans(binDir, account);
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), TEMP_PREFIX));
  await fsp.writeFile(path.join(root, CREATOR_FILE), String(process.pid));
  const cluster = new Cluster(root, binDir, account);
  running.add(cluster);
  stopAllAtExit();
  try {
    await cluster.create(options.port);
  } catch (err) {
    await cluster.stop().catch(() => {});
    throw err;
  }
  return cluster;
}

// A root-level hook (this module is first imported while mocha loads a test file): a server that a
// test left running, for instance when it failed before its own clean-up, stops when the run ends.
// Scripts that import this module outside mocha have no `after`.
if (typeof after === 'function') {
  after(async () => {
    await Promise.all([...running].map((cluster) => cluster.stop()));
  });
}

let exitHookInstalled = false;

/** A last resort for a process that ends without stopping its servers (a script's own exit). */
function stopAllAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const cluster of running) cluster.stopAtExit();
  });
}

/**
 * Stops and removes the servers of processes that ended without stopping them: pg_ctl starts the
 * server in a session of its own, so it outlives a test run interrupted by Ctrl-C (a signal ends
 * the process without its 'exit' event). Best effort: another user's folders are left alone.
 */
async function removeOrphans(binDir: string, account: Account | null): Promise<void> {
  const tmp = os.tmpdir();
  const names = (await fsp.readdir(tmp).catch(() => [] as string[])).filter((name) => name.startsWith(TEMP_PREFIX));
  for (const name of names) {
    const root = path.join(tmp, name);
    const creator = Number(await fsp.readFile(path.join(root, CREATOR_FILE), 'utf8').catch(() => ''));
    if (!creator || processAlive(creator)) continue;
    const orphan = new Cluster(root, binDir, account);
    await orphan.removeOrphan().catch(() => {});
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The bin folder of the highest PostgreSQL version installed. */
function findBinDir(): string {
  const versions = (fs.existsSync(PG_LIB) ? fs.readdirSync(PG_LIB) : [])
    .filter((name) => /^\d+(\.\d+)?$/.test(name) && fs.existsSync(path.join(PG_LIB, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error(`no PostgreSQL server under ${PG_LIB}/<version>/bin: install the Debian package postgresql (make does)`);
  }
  return path.join(PG_LIB, versions[0], 'bin');
}

/**
 * Whom the server runs as: PostgreSQL refuses to run as root, so root runs it as Debian's
 * `postgres` system user; anyone else runs it as themselves (null).
 */
function serverAccount(): Account | null {
  if (process.getuid?.() !== 0) return null;
  const entry = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === 'postgres');
  if (!entry) throw new Error('PostgreSQL does not run as root and there is no `postgres` system user to run it as: install the Debian package postgresql');
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}


class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly output: string,
  ) {
    super(`${command} exited with ${exitCode ?? 'a signal'}: ${output.trim()}`);
  }
}

type State = 'new' | 'running' | 'down' | 'removed';

class Cluster implements PrivatePostgres {
  readonly dataDir: string;
  readonly logFile: string;
  port = 0;
  private state: State = 'new';
  private readonly password = crypto.randomBytes(24).toString('base64url');
  /** Operations run one after another, so that stop() from a hook never races a start. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly root: string,
    private readonly binDir: string,
    private readonly account: Account | null,
  ) {
    this.dataDir = path.join(root, 'data');
    this.logFile = path.join(root, 'postgres.log');
  }

  get url(): string {
    return `postgres://${USER}:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${DATABASE}`;
  }

  /** initdb, the first start and the database; called once, by startPostgres. */
  async create(port: number | undefined): Promise<void> {
    await this.serially(async () => {
      if (this.account) await fsp.chown(this.root, this.account.uid, this.account.gid);
      const pwfile = path.join(this.root, 'pwfile');
      await this.writeOwnFile(pwfile, this.password + '\n');
      // Password logins (scram) over TCP, so the URL's password is checked. The socket is trusted:
      // it lies in the temporary folder, which only the server's user (and root) may enter.
      // --no-sync: a throwaway cluster need not reach the disk.
      await this.run('initdb', [
        '-D', this.dataDir, '-U', USER, `--pwfile=${pwfile}`,
        '--auth-host=scram-sha-256', '--auth-local=trust',
        '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions',
      ]);
      await fsp.rm(pwfile);
      await fsp.appendFile(path.join(this.dataDir, 'postgresql.conf'), "\ninclude 'vaa-test.conf'\n");
      for (let attempt = 1; ; attempt++) {
        const chosen = port ?? (await freePort());
        try {
          await this.launch(chosen);
          break;
        } catch (err) {
          const taken = err instanceof Error && /Address already in use/.test(err.message);
          if (port !== undefined || !taken || attempt >= PORT_TRIES) throw err;
        }
      }
      await this.run('createdb', ['-h', this.root, '-p', String(this.port), '-U', USER, DATABASE]);
    });
  }

  stop = (): Promise<void> => {
    this.stopping ??= this.serially(async () => {
      if (this.state === 'running') await this.shutDown();
      this.state = 'removed';
      running.delete(this);
      await fsp.rm(this.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    });
    return this.stopping;
  };

  restart = (): Promise<void> =>
    this.serially(async () => {
      this.mustExist('restart');
      if (this.state === 'down') return this.launch(this.port);
      const from = await this.logSize();
      await this.pgCtl(['restart', '-m', 'fast']).catch(async (err) => {
        throw await this.startFailure(err, from);
      });
    });

  kill = (): Promise<void> =>
    this.serially(async () => {
      this.mustExist('kill');
      if (this.state !== 'running') return;
      await this.pgCtl(['stop', '-m', 'immediate']);
      this.state = 'down';
    });

  start = (): Promise<void> =>
    this.serially(async () => {
      this.mustExist('start');
      if (this.state !== 'running') await this.launch(this.port);
    });

  /** Stops the server that may still run on this folder, whose creator is gone, and removes it. */
  async removeOrphan(): Promise<void> {
    if (fs.existsSync(path.join(this.dataDir, 'postmaster.pid'))) await this.shutDown();
    await fsp.rm(this.root, { recursive: true, force: true });
  }

  /** Best effort from the process's 'exit' handler, where nothing asynchronous runs any more. */
  stopAtExit(): void {
    if (this.state === 'running') {
      spawnSync(path.join(this.binDir, 'pg_ctl'), ['stop', '-D', this.dataDir, '-m', 'immediate', '-w', '-t', '10'], this.spawnOptions());
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.queue.then(operation);
    this.queue = result.catch(() => {});
    return result;
  }

  private mustExist(what: string): void {
    if (this.state === 'removed') throw new Error(`${what}: this PostgreSQL server was stopped and removed`);
  }

  /** Starts the server on `port` and waits until it accepts connections. */
  private async launch(port: number): Promise<void> {
    await this.writeOwnFile(path.join(this.dataDir, 'vaa-test.conf'), settings(port, this.root));
    const from = await this.logSize();
    try {
      await this.pgCtl(['start']);
    } catch (err) {
      throw await this.startFailure(err, from);
    }
    this.port = port;
    this.state = 'running';
  }

  /** Fast shutdown; immediate when that fails while the server is still up. */
  private async shutDown(): Promise<void> {
    try {
      await this.pgCtl(['stop', '-m', 'fast']);
    } catch (err) {
      await this.pgCtl(['stop', '-m', 'immediate']).catch(() => {});
      // `pg_ctl status` exits with 3 when no server runs: one that crashed on its own is fine.
      const status = await this.run('pg_ctl', ['status', '-D', this.dataDir]).then(() => 0, (e: CommandError) => e.exitCode);
      if (status !== 3) throw err;
    }
    this.state = 'down';
  }

  /** pg_ctl on this cluster, waiting for the start or stop to finish, its output going to the log. */
  private pgCtl(args: string[]): Promise<string> {
    return this.run('pg_ctl', [...args, '-D', this.dataDir, '-l', this.logFile, '-w', '-t', String(PG_CTL_WAIT_S)]);
  }

  private async startFailure(err: unknown, logOffset: number): Promise<Error> {
    let tail = '';
    try {
      const text = (await fsp.readFile(this.logFile, 'utf8')).slice(logOffset);
      tail = text.trimEnd().split('\n').slice(-LOG_TAIL_LINES).join('\n');
    } catch {
      tail = '(no log)';
    }
    const message = err instanceof Error ? err.message : String(err);
    return new Error(`PostgreSQL did not start: ${message}\n--- end of the server log ---\n${tail}`);
  }

  private async logSize(): Promise<number> {
    return fsp.stat(this.logFile).then((s) => s.size, () => 0);
  }

  /** Writes a file that the server's user owns (the server refuses to read some that it does not). */
  private async writeOwnFile(file: string, text: string): Promise<void> {
    await fsp.writeFile(file, text, { mode: 0o600 });
    if (this.account) await fsp.chown(file, this.account.uid, this.account.gid);
  }

  /** Runs one of the PostgreSQL tools; rejects with its output when it fails. */
  private run(tool: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(path.join(this.binDir, tool), args, { ...this.spawnOptions(), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(output) : reject(new CommandError(`${tool} ${args[0]}`, code, output))));
    });
  }

  private spawnOptions() {
    return {
      // The server's folder as working directory: the server's user may not enter the caller's.
      cwd: this.root,
      // A clean environment: a PGHOST, PGPORT or PGDATA of the caller's would redirect the tools.
      // TZ: initdb writes it as the cluster's time zone, the same on every machine.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' },
      // Node switches the child to the account (dropping root's supplementary groups) before exec.
      ...(this.account ?? {}),
    };
  }
}

/** The server settings that initdb's postgresql.conf includes, rewritten before each start. */
function settings(port: number, socketDir: string): string {
  return [
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    `unix_socket_directories = '${socketDir.replace(/'/g, "''")}'`,
    `max_connections = ${MAX_CONNECTIONS}`,
    `shared_buffers = ${SHARED_BUFFERS}`,
    // Tests, benches and demos only: data lost in an OS crash costs nothing here, while flushing
    // to disk would slow every test down. A crash of the server alone (kill()) still loses
    // nothing committed: the WAL is written to the OS at each commit, only not flushed. That is
    // why synchronous_commit stays on: off, a kill() loses the commits of the last few 100 ms.
    `fsync = off`,
    `full_page_writes = off`,
    '',
  ].join('\n');
}
