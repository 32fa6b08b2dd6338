// A private MQTT broker for tests: Debian's mosquitto (the Makefile installs it) on 127.0.0.1 and
// a free port, anonymous, without persistence, with a configuration of its own in a temporary
// folder. It can be stopped and started again on the same port, as a broker restart.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

const MOSQUITTO = '/usr/sbin/mosquitto';

export interface PrivateBroker {
  readonly url: string;
  readonly port: number;
  /** Stops the broker (its retained messages go with it: no persistence). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** Resolves once something listens on the port. */
async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited at start:\n${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port}:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startBroker(): Promise<PrivateBroker> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-mqtt-'));
  const port = await freePort();
  const config = path.join(dir, 'mosquitto.conf');
  fs.writeFileSync(config, [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'log_dest stderr', 'log_type error', 'log_type warning', ''].join('\n'));
  let child: ChildProcess | null = null;
  let text = '';
  const start = async () => {
    text = '';
    child = spawn(MOSQUITTO, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (text += d));
    child.stderr!.on('data', (d) => (text += d));
    await listening(port, child, () => text);
  };
  const stop = async () => {
    const c = child as ChildProcess | null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
    child = null;
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    start,
    stop,
    close: async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
