// `make bench`: tamper-check job latency against plain decoding of the same clip and reference,
// and throughput with WORKERS=2 while GET requests are served. Prints tables; asserts nothing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { quantile } from '../lib/stats.js';
import { spawnService } from '../testkit/service.js';
import { VTEST_AVI } from '../testkit/opencv-data.js';

const RESOLUTIONS: [number, number][] = [
  [640, 480],
  [1280, 720],
  [1920, 1080],
];
const LATENCY_RUNS = 15;
const THROUGHPUT_JOBS = 60;
const THROUGHPUT_CLIENTS = 6;
const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');

function percentile(values: number[], p: number): number {
  return quantile(values, p / 100);
}

function makeClip(dir: string, w: number, h: number): { clip: string; reference: string } {
  const clip = path.join(dir, `clip-${w}x${h}.mp4`);
  const reference = path.join(dir, `ref-${w}x${h}.png`);
  const scale = `scale=${w}:${h}`;
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-ss', '40', '-i', VTEST_AVI, '-frames:v', '25', '-vf', scale, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
  execFileSync('ffmpeg', ['-y', '-v', 'error', '-ss', '5', '-i', VTEST_AVI, '-frames:v', '1', '-vf', scale, reference]);
  return { clip, reference };
}

const blobs = new Map<string, Blob>();
function blob(file: string): Blob {
  if (!blobs.has(file)) blobs.set(file, new Blob([fs.readFileSync(file)]));
  return blobs.get(file)!;
}

function form(clip: string, reference: string): FormData {
  const fd = new FormData();
  fd.append('video', blob(clip), 'clip.mp4');
  fd.append('image', blob(reference), 'reference.png');
  return fd;
}

async function post(url: string, clip: string, reference: string): Promise<any> {
  const res = await fetch(`${url}/kamcheck`, { method: 'POST', headers: { authorization: AUTH }, body: form(clip, reference) });
  return (await res.json()) as any;
}

async function waitDone(url: string, id: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/kamcheck/${id}`, { headers: { authorization: AUTH } });
    const body = (await res.json()) as any;
    if (body.task.complete) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kamcheck-'));
  const clips = RESOLUTIONS.map(([w, h]) => ({ w, h, ...makeClip(dir, w, h) }));
  // The service in its own process, as deployed, so this client does not share its event loop.
  const service = await spawnService({
    DATA_DIR: path.join(dir, 'data'),
    AUTH_CREDENTIALS: 'bench:bench',
    WORKERS: '2',
    KAMCHECK_WAIT_MS: '30000',
  });
  try {
    const decodeP50 = new Map<number, number>();
    console.log('\nTamper check latency (25-frame clip + reference, sequential POSTs that wait for the result)');
    console.log('| resolution | plain decode p50 ms | job p50 ms | job p95 ms | p50 ratio to decode |');
    console.log('|---|---|---|---|---|');
    for (const c of clips) {
      const decode: number[] = [];
      for (let i = 0; i < LATENCY_RUNS; i++) {
        const t = performance.now();
        const { frames } = readVideoFrames(c.clip, 26);
        const ref = readImage(c.reference);
        decode.push(performance.now() - t);
        frames.forEach((f) => f.release());
        ref.release();
      }
      await post(service.url, c.clip, c.reference); // warm the workers
      const job: number[] = [];
      for (let i = 0; i < LATENCY_RUNS; i++) {
        const t = performance.now();
        const body = await post(service.url, c.clip, c.reference);
        if (!body.task?.complete) await waitDone(service.url, body.task.job_id);
        job.push(performance.now() - t);
      }
      const d50 = percentile(decode, 50);
      decodeP50.set(c.w, d50);
      const j50 = percentile(job, 50);
      console.log(`| ${c.w}x${c.h} | ${d50.toFixed(0)} | ${j50.toFixed(0)} | ${percentile(job, 95).toFixed(0)} | ${(j50 / d50).toFixed(2)}x |`);
    }

    const hd = clips.find((c) => c.w === 1280)!;
    const hdDecodeMs = decodeP50.get(1280)!;
    const getLatencies: number[] = [];
    let polling = true;
    const ids: string[] = [];
    const poller = (async () => {
      while (polling) {
        const target = ids.length ? `/kamcheck/${ids[ids.length - 1]}` : '/kamcheck';
        const t = performance.now();
        const res = await fetch(`${service.url}${target}`, { headers: { authorization: AUTH } });
        await res.arrayBuffer();
        getLatencies.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const start = performance.now();
    let next = 0;
    const clients = Array.from({ length: THROUGHPUT_CLIENTS }, async () => {
      while (next < THROUGHPUT_JOBS) {
        next++;
        const body = await post(service.url, hd.clip, hd.reference);
        ids.push(body.task.job_id);
        if (!body.task.complete) await waitDone(service.url, body.task.job_id);
      }
    });
    await Promise.all(clients);
    const seconds = (performance.now() - start) / 1000;
    polling = false;
    await poller;
    console.log(`\nThroughput at 1280x720, WORKERS=2, ${THROUGHPUT_CLIENTS} clients, ${THROUGHPUT_JOBS} checks`);
    // The ceiling if the 2 cores did nothing but decode the clips: plain decode p50 measured above.
    const ceiling = (2 * 1000) / hdDecodeMs;
    const rate = THROUGHPUT_JOBS / seconds;
    console.log('| checks/s | decode-only ceiling checks/s (2 cores) | ratio to ceiling | GET requests | GET p50 ms | GET p99 ms |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| ${rate.toFixed(1)} | ${ceiling.toFixed(1)} | ${(rate / ceiling).toFixed(2)} | ${getLatencies.length} | ${percentile(getLatencies, 50).toFixed(1)} | ${percentile(getLatencies, 99).toFixed(1)} |`,
    );
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
