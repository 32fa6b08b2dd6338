// kill -9 of the service while a large upload streams in: after a restart no half job appears,
// the partial upload is gone, and jobs accepted before the kill are intact.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api, AUTH, form, removeTempDir, spawnService, tempDataDir, waitComplete } from '../testkit/service.js';
import { testMedia } from '../testkit/media.js';
import { httpRequest, rawConnect } from './helpers/raw-http.js';
import { BOUNDARY, multipartType } from '../testkit/hostile-corpus/multipart.js';

const MiB = 1024 * 1024;

describe('kill -9 during an upload', function () {
  this.timeout(120_000);
  /** Shared by the killed service and its restart, removed once both have exited. */
  let dataDir: string | undefined;
  afterEach(() => {
    if (dataDir) removeTempDir(dataDir);
    dataDir = undefined;
  });

  it('leaves no half job and no upload files after a restart', async () => {
    const media = testMedia();
    dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, WORKERS: '1', KAMCHECK_WAIT_MS: '0', MIN_FREE_DISK_MB: '1', AUTH_CREDENTIALS: 'tester:correct horse battery staple' };
    const tmp = path.join(dataDir, 'tmp');
    const jobs = path.join(dataDir, 'jobs');

    const first = await spawnService(env);
    // A job accepted and finished before the kill.
    const before = await api(`${first.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
    expect(before.status).to.equal(200);
    await waitComplete(`${first.url}/kamcheck/${before.body.task.job_id}`, 60_000);

    // A 200 MiB upload, streamed until the service has written a few MiB of it to disk.
    const { socket } = rawConnect(first.url);
    socket.on('error', () => {});
    socket.write(httpRequest('POST', '/kamcheck', [
      ['Host', 'appliance'],
      ['Authorization', AUTH],
      ['Content-Type', multipartType()],
      ['Content-Length', 200 * MiB],
    ]));
    socket.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="video"; filename="big.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 0x42);
    const written = () => dirSize(tmp);
    while (written() < 4 * MiB) {
      if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
    }
    first.child.kill('SIGKILL');
    expect(await first.exited).to.equal('SIGKILL');
    socket.destroy();
    // The kill left the partial upload behind...
    expect(dirSize(tmp)).to.be.at.least(4 * MiB);
    // ...and suppose it had also hit between moving an upload into its job folder and writing
    // the job's record (the other window where a crash leaves files but no job).
    const orphan = path.join(jobs, randomUUID(), 'input');
    fs.mkdirSync(orphan, { recursive: true });
    fs.copyFileSync(media.clip, path.join(orphan, 'video'));
    // ...or between the end of the finished job and the removal of its uploads.
    const leftover = path.join(jobs, before.body.task.job_id, 'input');
    fs.mkdirSync(leftover, { recursive: true });
    fs.copyFileSync(media.clip, path.join(leftover, 'video'));

    const second = await spawnService(env);
    try {
      expect(fs.readdirSync(tmp), 'partial uploads removed at start').to.deep.equal([]);
      expect(fs.readdirSync(jobs), 'orphan and finished job folders removed at start').to.deep.equal([]);
      const list = await api(`${second.url}/kamcheck`);
      expect(list.body.tasks.map((t: { job_id: string }) => t.job_id), 'no half job').to.deep.equal([before.body.task.job_id]);
      expect(list.body.tasks[0].success).to.equal(true);
      expect((await api(`${second.url}/healthz`)).status).to.equal(200);
      // The service takes uploads as before.
      const after = await api(`${second.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      expect((await waitComplete(`${second.url}/kamcheck/${after.body.task.job_id}`, 60_000)).success).to.equal(true);
      expect((await api(`${second.url}/kamcheck`)).body.tasks).to.have.length(2);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

function dirSize(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      try {
        total += fs.statSync(path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name)).size;
      } catch {
        /* removed meanwhile */
      }
    }
  }
  return total;
}
