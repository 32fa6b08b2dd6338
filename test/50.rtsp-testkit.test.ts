// The RTSP test cameras of testkit/rtsp-server.ts, which the stream-source tests and bench stand
// on: real ffmpeg readers over TCP get the mounts' pictures at camera pace behind Basic
// credentials, and the server switches, stalls, stops and restarts as the tests need.
//
// Fixtures: node build/scripts/make-stream-fixtures.js (`make fixtures`); generated here when missing.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startRtspServer, type RtspServer } from '../testkit/rtsp-server.js';
import { streamFiles, type StreamName } from '../testkit/stream-fixtures.js';
import { descendants, stillRunning, type SeenProcess } from './helpers/process-tree.js';
import { playRtsp } from './helpers/rtsp-client.js';
import { sleep, until } from './helpers/until.js';

/** A 25-frame read ends in about 1.3 s (handshake, then a second of stream); this bounds a broken server. */
const READ_DEADLINE_MS = 20_000;
/** How long a reader of a stalled mount is watched for a picture before it is killed. */
const STALL_WATCH_MS = 4_000;

interface Reading {
  /** Grey frames, width x height bytes each. */
  bytes: Buffer;
  stderr: string;
  code: number | null;
  /** Killed at its deadline. */
  killed: boolean;
  /** From the start of ffmpeg to its exit. */
  elapsedMs: number;
}

/** Reads `frames` frames of the URL as grey pixels with ffmpeg over TCP; SIGKILL at the deadline. */
function readFrames(url: string, frames: number, deadlineMs = READ_DEADLINE_MS, inputOptions: string[] = []): Promise<Reading> {
  return new Promise((resolve, reject) => {
    const ff = spawn('ffmpeg', [
      '-nostdin', '-v', 'error', '-rtsp_transport', 'tcp', ...inputOptions, '-i', url,
      '-frames:v', String(frames), '-f', 'rawvideo', '-pix_fmt', 'gray', '-',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const started = Date.now();
    const chunks: Buffer[] = [];
    let stderr = '';
    let killed = false;
    ff.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    ff.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      killed = true;
      ff.kill('SIGKILL');
    }, deadlineMs);
    ff.on('error', reject);
    ff.on('close', (code) => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(chunks), stderr, code, killed, elapsedMs: Date.now() - started });
    });
  });
}

function frameAt(reading: Reading, index: number, width: number, height: number): Buffer {
  return reading.bytes.subarray(index * width * height, (index + 1) * width * height);
}

/** Mean absolute 4-neighbour Laplacian of a grey frame: how much fine detail (edges) it holds. */
function sharpness(frame: Buffer, width: number, height: number): number {
  let sum = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      sum += Math.abs(4 * frame[i] - frame[i - 1] - frame[i + 1] - frame[i - width] - frame[i + width]);
    }
  }
  return sum / ((width - 2) * (height - 2));
}

function meanAbsDifference(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Presentation times (s) of the video packets ffprobe reads from the URL within `seconds` of stream. */
function packetTimes(url: string, seconds: number): number[] {
  const out = execFileSync('ffprobe', [
    '-v', 'error', '-rtsp_transport', 'tcp', '-read_intervals', `%+${seconds}`,
    '-select_streams', 'v', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', url,
  ], { timeout: READ_DEADLINE_MS }).toString();
  return out.split('\n').map((line) => parseFloat(line)).filter((t) => Number.isFinite(t));
}

describe('RTSP test cameras (testkit)', function () {
  this.timeout(60_000);
  const credentials = { user: 'viewer', password: crypto.randomBytes(12).toString('hex') };
  let streams: Record<StreamName, string>;
  let server: RtspServer;
  let tmp: string;
  /** Every serve.py this file started, checked at the end. */
  const servers: SeenProcess[] = [];
  const noteServer = () => servers.push(...descendants(process.pid).filter((p) => p.pid === server.pid));

  before(async function () {
    this.timeout(120_000);
    streams = await streamFiles();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-rtsp-'));
    server = await startRtspServer({ mounts: { cam1: streams.normal, 'site/cam2': streams['other-size'] }, credentials });
    noteServer();
  });
  after(async () => {
    await server?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('serves each mount to ffmpeg over TCP: frames of its own size, moving, at camera pace', async () => {
    expect(server.url('cam1')).to.equal(`rtsp://viewer:${credentials.password}@127.0.0.1:${server.port}/cam1`);
    const [cam1, cam2] = await Promise.all([readFrames(server.url('cam1'), 25), readFrames(server.url('site/cam2'), 25)]);
    expect(cam1.code, cam1.stderr).to.equal(0);
    expect(cam2.code, cam2.stderr).to.equal(0);
    expect(cam1.bytes.length).to.equal(25 * 768 * 576);
    expect(cam2.bytes.length).to.equal(25 * 640 * 360);
    // The 25th frame leaves the server 0.96 s after the first (ffmpeg holds the first ones back
    // while it probes the stream, so their arrival times say nothing); a file sent as fast as it
    // is read would be over in a tenth of that.
    expect(cam1.elapsedMs).to.be.within(900, 10_000);
    // People walk: the last frame differs from the first (a frozen picture would not).
    expect(meanAbsDifference(frameAt(cam1, 0, 768, 576), frameAt(cam1, 24, 768, 576))).to.be.above(1);
  });

  it('refuses a wrong password and a missing one with 401 Unauthorized', async () => {
    const wrong = await readFrames(server.url('cam1', { credentials: { user: 'viewer', password: 'not-the-password' } }), 1);
    expect(wrong.code).to.not.equal(0);
    expect(wrong.stderr).to.contain('401 Unauthorized');
    expect(wrong.bytes.length).to.equal(0);
    const none = await readFrames(server.url('cam1', { credentials: false }), 1);
    expect(none.stderr).to.contain('401 Unauthorized');
    expect(none.bytes.length).to.equal(0);
  });

  it('loops a stream with timestamps that keep rising at 25 fps (an added mount with a 2 s file)', async () => {
    // The first 50 frames of the normal stream (keyframes every 10): a loop every 2 s.
    const short = path.join(tmp, 'two-seconds.mpegts');
    execFileSync('ffmpeg', ['-v', 'error', '-i', streams.normal, '-frames:v', '50', '-c', 'copy', '-f', 'mpegts', '-muxdelay', '0', '-muxpreload', '0', short]);
    await server.addMount('short', short);
    const started = Date.now();
    const times = packetTimes(server.url('short'), 5);
    const elapsed = Date.now() - started;
    await server.removeMount('short');

    // 5 s of stream: two seams of the loop, read in real time.
    expect(times.length).to.be.within(120, 135);
    expect(elapsed).to.be.above(4_000);
    const steps = times.slice(1).map((t, i) => t - times[i]);
    // 0.04 s a frame; a seam of the loop may add one frame's time.
    expect(Math.min(...steps)).to.be.above(0.03);
    expect(Math.max(...steps)).to.be.below(0.09);
    expect(times[times.length - 1] - times[0]).to.be.within(4.5, 5.5);
    expect((await readFrames(server.url('short'), 1)).stderr).to.contain('404 Not Found');
  });

  it('gives readers after switchMount the new file: a blurred camera is measurably less sharp', async () => {
    const before = await readFrames(server.url('cam1'), 5);
    await server.switchMount('cam1', streams.blurred);
    expect((await server.status()).cam1).to.include({ file: streams.blurred, stalled: false });
    const after = await readFrames(server.url('cam1'), 5);
    await server.switchMount('cam1', streams.normal);
    const again = await readFrames(server.url('cam1'), 5);

    const sharp = sharpness(frameAt(before, 4, 768, 576), 768, 576);
    const blurred = sharpness(frameAt(after, 4, 768, 576), 768, 576);
    // Measured on the files: 11-12 on the walkway in focus, 1.1-1.2 defocused.
    expect(blurred).to.be.below(sharp * 0.25);
    expect(sharpness(frameAt(again, 4, 768, 576), 768, 576)).to.be.above(sharp * 0.8);
  });

  it('stalls a mount: the handshake is answered, no picture follows, until resume', async () => {
    // A current reader stops receiving.
    const long = readFrames(server.url('cam1'), 250, 8_000);
    const watching = await playRtsp(server.url('cam1'));
    await until('pictures on the open session', () => watching.rtpBytes() > 20_000);
    await server.stall('cam1');
    await sleep(300);
    const frozenAt = watching.rtpBytes();
    await sleep(1_500);
    expect(watching.rtpBytes()).to.equal(frozenAt);
    watching.close();

    // A new reader: OPTIONS, DESCRIBE, SETUP and PLAY answered 200, then at most the parameter
    // sets that let DESCRIBE's session description be written (tens of bytes), no picture.
    const session = await playRtsp(server.url('cam1'));
    expect(session.replies.map((r) => `${r.method} ${r.status}`)).to.deep.equal(['OPTIONS 200', 'DESCRIBE 200', 'SETUP 200', 'PLAY 200']);
    expect(session.replies[1].body).to.contain('H264/90000');
    await sleep(2_000);
    expect(session.rtpBytes()).to.be.below(200);
    session.close();

    // ffmpeg gets no frame: it hangs until it is killed (ffmpeg 5.1 reports its 1 s socket
    // -timeout and waits on) or fails.
    const stalled = await readFrames(server.url('cam1'), 1, STALL_WATCH_MS, ['-timeout', '1000000']);
    expect(stalled.killed || stalled.code !== 0, stalled.stderr).to.equal(true);
    expect(stalled.bytes.length).to.equal(0);
    expect((await server.status()).cam1.stalled).to.equal(true);

    await server.resume('cam1');
    const resumed = await readFrames(server.url('cam1'), 25);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(resumed.bytes.length).to.equal(25 * 768 * 576);
    // The reader that was open at the stall got its first frames only.
    const longReading = await long;
    expect(longReading.bytes.length).to.be.below(250 * 768 * 576);
    // Stalled sessions end with their readers: no pipeline is left.
    await until('the stalled pipelines to go', async () => (await server.status()).cam1.pipelines === 0);
  });

  it('stop() frees the port (readers get connection refused) and restart() serves on it again', async () => {
    const port = server.port;
    await server.stop();
    expect(server.pid).to.equal(undefined);
    const refused = await readFrames(server.url('cam1'), 1);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('Connection refused');
    await server.stop();

    await server.restart();
    noteServer();
    expect(server.port).to.equal(port);
    const [cam1, cam2] = await Promise.all([readFrames(server.url('cam1'), 25), readFrames(server.url('site/cam2'), 25)]);
    expect(cam1.bytes.length, cam1.stderr).to.equal(25 * 768 * 576);
    expect(cam2.bytes.length, cam2.stderr).to.equal(25 * 640 * 360);
  });

  it('a start on a given port serves there; a taken port fails with the reason', async () => {
    const port = await freePort();
    const other = await startRtspServer({ mounts: { cam: streams.covered }, port });
    expect(other.port).to.equal(port);
    expect(other.url('cam')).to.equal(`rtsp://127.0.0.1:${port}/cam`);
    const covered = await readFrames(other.url('cam'), 1);
    await other.stop();
    expect(covered.bytes.length, covered.stderr).to.equal(768 * 576);

    const clash = await startRtspServer({ mounts: { cam: streams.covered }, port: server.port }).then(
      async (s) => {
        await s.stop();
        throw new Error('a second server started on a taken port');
      },
      (err: Error) => err,
    );
    expect(clash.message).to.match(/already in use/i);
  });

  it('leaves no server or reader process behind', async () => {
    await server.stop();
    expect(servers.length).to.be.at.least(2);
    expect(stillRunning(servers)).to.deep.equal([]);
    const left = descendants(process.pid).filter((p) => p.state !== 'Z' && (p.name === 'ffmpeg' || p.name === 'ffprobe' || p.name === 'python3'));
    expect(left).to.deep.equal([]);
  });
});
