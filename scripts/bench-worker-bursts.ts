// `make bench`: the workers' memory over bursts of short jobs, as over a long video
// (bench-long-video.ts): a tamper-check burst (1080p clips against a camera's reference) and a
// still image batch (face logs of still images), each job after the other from as many clients
// as the service has workers. Starts the service as a real process on its defaults in a
// temporary DATA_DIR and reads its process tree's memory from /proc every second. Prints, per
// burst, the jobs, their rate, and the largest worker's RSS per tenth of the burst, with the last
// tenth against the first (issue 39's flatness: within 10%, peak under 700 MiB).
//
// Options: --checks N (300 tamper checks), --stills N (150 still face logs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnService, stopServiceOnSignals, type ServiceProcess } from '../testkit/service.js';
import { testMedia } from '../testkit/media.js';
import { DEFAULT_STILLS_DIR, generateTestStills } from '../testkit/facelog-fixtures/stills.js';
import { TreeMemory, maxPerTenth, flatnessLine } from '../testkit/tree-memory.js';

const AUTH = 'Basic ' + Buffer.from('bench:bench').toString('base64');
const MiB = 1024 * 1024;

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

async function post(service: ServiceProcess, route: string, fields: Record<string, string>, file: { field: string; path: string; type: string }): Promise<Record<string, any>> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append(file.field, await fs.openAsBlob(file.path, { type: file.type }), path.basename(file.path));
  const res = await fetch(`${service.url}${route}`, { method: 'POST', headers: { authorization: AUTH }, body: form });
  const body = (await res.json()) as { task?: Record<string, any> };
  if (!body.task) throw new Error(`${route}: ${res.status} ${JSON.stringify(body)}`);
  return body.task;
}

/** Polls the task until it is complete; throws when it failed. */
async function finished(service: ServiceProcess, route: string, task: Record<string, any>): Promise<void> {
  while (!task.complete) {
    await new Promise((r) => setTimeout(r, 100));
    task = ((await (await fetch(`${service.url}${route}/${task.job_id}`, { headers: { authorization: AUTH } })).json()) as { task: Record<string, any> }).task;
  }
  if (!task.success) throw new Error(`${route} ${task.job_id} failed: ${JSON.stringify(task.error)}`);
}

/** Runs `count` jobs from `clients` clients, each after the previous; the memory of the burst alone. */
async function burst(name: string, service: ServiceProcess, count: number, clients: number, job: (i: number) => Promise<void>): Promise<void> {
  const memory = new TreeMemory(service.child.pid!);
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < count) await job(next++);
  }));
  const seconds = (performance.now() - start) / 1000;
  memory.stop();
  const tenths = maxPerTenth(memory.workerSeries);
  const peak = memory.peakOf('worker').peak;
  const mib = (b: number) => (b / MiB).toFixed(0);
  console.log(`\n${name}: ${count} jobs in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(2)}/s, ${clients} clients)`);
  console.log(`Largest worker RSS per tenth of the burst (MiB): ${tenths.map(mib).join(' ')}`);
  console.log(flatnessLine(tenths, peak));
}

async function main(): Promise<void> {
  const media = testMedia();
  if (!fs.existsSync(path.join(DEFAULT_STILLS_DIR, 'manifest.json'))) generateTestStills(DEFAULT_STILLS_DIR);
  const images = fs.readdirSync(DEFAULT_STILLS_DIR).filter((n) => n.endsWith('.jpg')).sort().map((n) => path.join(DEFAULT_STILLS_DIR, n));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-bursts-'));
  const service = await spawnService({ DATA_DIR: path.join(dir, 'data'), AUTH_CREDENTIALS: 'bench:bench', KAMCHECK_WAIT_MS: '0' });
  stopServiceOnSignals(service, dir);
  const clients = os.availableParallelism();
  try {
    const reference = new FormData();
    reference.append('image', await fs.openAsBlob(media.referenceHd, { type: 'image/png' }), 'reference.png');
    const put = await fetch(`${service.url}/cameras/bench/reference`, { method: 'PUT', headers: { authorization: AUTH }, body: reference });
    if (!put.ok) throw new Error(`reference: ${put.status} ${await put.text()}`);
    const check = async () => finished(service, '/kamcheck', await post(service, '/kamcheck', { camera: 'bench' }, { field: 'video', path: media.clipHd, type: 'video/mp4' }));
    const still = async (i: number) => finished(service, '/face_log', await post(service, '/face_log', {}, { field: 'image', path: images[i % images.length], type: 'image/jpeg' }));
    // Each worker runs one job of each kind first (one per client at once, so one per worker): the
    // models and libraries are loaded before the bursts count.
    for (const job of [check, still]) await Promise.all(Array.from({ length: clients }, (_, i) => job(i)));

    await burst('Tamper-check burst (1920x1080, 25 frames, against the camera\'s reference)', service, arg('checks', 300), clients, check);
    await burst(`Still image batch (face logs of ${images.length} stills in turn)`, service, arg('stills', 150), clients, still);
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
