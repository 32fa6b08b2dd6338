// Disk full while a face log runs: the job fails at once with `insufficient_storage` and a plain
// message, its partial results are removed, it is not retried as a crash, other jobs and the
// service go on, /healthz reports it, and the next job on a disk with room succeeds.
// Real disks: a small tmpfs holds DATA_DIR (database, uploads, results), filled by a ballast file,
// so ffmpeg and SQLite meet a genuine ENOSPC. Mounting needs root; without it those tests are
// skipped and the injected-probe test (the running-job floor) still runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { api, form, startTestService, type TestService } from '../testkit/service.js';
import { testMedia } from '../testkit/media.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { sleep } from './helpers/until.js';

const MiB = 1024 * 1024;
const fixture = (scenario: string) => facelogVideo(scenario).file;
/** 255 frames of 640x480: long enough to be caught while running; its overlay is about 0.85 MB. */
const LONG = fixture('reappear');
/** 66 frames: the job that must succeed afterwards. */
const SHORT = fixture('single');
const JOB_WAIT_MS = 180_000;

type Task = Record<string, any>;

async function submitFaceLog(svc: TestService, file: string): Promise<string> {
  const res = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: file }) });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.task.job_id;
}

/** Polls the task until `done(task)` or the deadline. */
async function waitTask(svc: TestService, analytic: string, id: string, done: (t: Task) => boolean, ms = JOB_WAIT_MS): Promise<Task> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await api(`${svc.url}/${analytic}/${id}`);
    if (done(body.task)) return body.task;
    if (Date.now() > deadline) throw new Error(`task ${id} not as expected after ${ms} ms: ${JSON.stringify(body.task)}`);
    await sleep(100);
  }
}
const complete = (t: Task) => t.complete;
/** In the frame loop: the worker has loaded its models and the overlay video is being written. */
const inFrameLoop = (t: Task) => t.complete || /^Processing frame \d+/.test(t.message);

async function expectFailedFull(svc: TestService, task: Task, message: RegExp): Promise<void> {
  expect(task.complete).to.equal(true);
  expect(task.success, task.message).to.equal(false);
  expect(task.error.code).to.equal('insufficient_storage');
  expect(task.error.message).to.match(message);
  expect(task.message).to.equal(task.error.message);
  // Failed on its first run: a full disk is not a crash to retry.
  expect((await svc.service.jobs.get(task.job_id))!.attempts).to.equal(1);
  expect(svc.logs.some((l) => l.job_id === task.job_id && /worker crashed|queued again/.test(String(l.msg)))).to.equal(false);
  // Nothing of it is left: no partial results, no results, no upload. The clean-up runs just
  // after the task is marked failed.
  const upload = path.join(svc.dataDir, 'jobs', task.job_id);
  const results = () => fs.readdirSync(path.join(svc.dataDir, 'results')).filter((n) => n.startsWith(task.job_id));
  for (let i = 0; i < 50 && (fs.existsSync(upload) || results().length > 0); i++) await sleep(100);
  expect(results()).to.deep.equal([]);
  expect(fs.existsSync(upload)).to.equal(false);
}

async function expectSucceeds(svc: TestService, file: string): Promise<Task> {
  const id = await submitFaceLog(svc, file);
  const task = await waitTask(svc, 'face_log', id, complete);
  expect(task.success, task.message).to.equal(true);
  const overlay = await fetch(task.results_video);
  expect(overlay.status).to.equal(200);
  expect((await overlay.arrayBuffer()).byteLength).to.be.above(10_000);
  expect(fs.readdirSync(path.join(svc.dataDir, 'results'))).to.deep.equal([id]);
  return task;
}

async function health(svc: TestService): Promise<{ status: number; body: any }> {
  return api(`${svc.url}/healthz`);
}

describe('disk full while jobs run', function () {
  this.timeout(300_000);
  let svc: TestService | undefined;

  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  describe('below the running-job floor (injected free space)', () => {
    it('stops a running face log, fails a queued one at start, lets a tamper check run, and takes jobs again once there is room', async () => {
      let free = 10_000 * MiB;
      // MIN_FREE_DISK_MB 100: uploads need 100 MiB free, running face logs stop below 25 MiB.
      svc = await startTestService({ MIN_FREE_DISK_MB: '100', KAMCHECK_WAIT_MS: '0' }, undefined, { diskSpace: async () => free });
      const media = testMedia();
      const running = await submitFaceLog(svc, LONG);
      const queued = await submitFaceLog(svc, SHORT);
      const check = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      expect(check.status).to.equal(200);

      await waitTask(svc, 'face_log', running, inFrameLoop);
      expect(fs.existsSync(path.join(svc.dataDir, 'results', `${running}.partial`))).to.equal(true);
      free = 10 * MiB; // something else filled the disk

      const stopped = await waitTask(svc, 'face_log', running, complete, 30_000);
      await expectFailedFull(svc, stopped, /^The disk of the appliance is nearly full \(10 MiB free, 25 MiB are kept free while jobs run\); the job was stopped and its partial results removed/);
      // Stopped at its next progress report, not by killing its worker.
      expect(svc.service.pool.restarts).to.equal(0);

      const refused = await waitTask(svc, 'face_log', queued, complete, 30_000);
      await expectFailedFull(svc, refused, /nearly full/);
      // The tamper check writes no result files: it runs on the low disk.
      const tamper = await waitTask(svc, 'kamcheck', check.body.task.job_id, complete, 60_000);
      expect(tamper.success, tamper.message).to.equal(true);

      const sick = await health(svc);
      expect(sick.status).to.equal(503);
      expect(sick.body.health.disk.ok).to.equal(false);
      expect(sick.body.health.disk.job_out_of_space.job_id).to.be.oneOf([running, queued]);
      expect(sick.body.error.message).to.match(/below MIN_FREE_DISK_MB.*ran out of disk space/);

      free = 10_000 * MiB; // old results deleted
      await expectSucceeds(svc, SHORT);
      const well = await health(svc);
      expect(well.status, JSON.stringify(well.body)).to.equal(200);
      expect(well.body.health.disk).to.not.have.property('job_out_of_space');
    });
  });

  describe('on a small file system (tmpfs)', () => {
    let mountPoint = '';

    before(function () {
      mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-tmpfs-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountPoint], { stdio: 'pipe' });
      } catch (err) {
        fs.rmdirSync(mountPoint);
        mountPoint = '';
        const why = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim();
        console.log(`      skipped: cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): ${why}`);
        this.skip();
      }
    });
    after(() => {
      if (!mountPoint) return;
      execFileSync('umount', [mountPoint]);
      fs.rmdirSync(mountPoint);
    });

    let dataDir = '';
    const ballast = () => path.join(mountPoint, 'ballast');
    beforeEach(() => {
      dataDir = fs.mkdtempSync(path.join(mountPoint, 'data-'));
    });
    afterEach(async () => {
      await svc?.stop();
      svc = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(ballast(), { force: true });
    });

    const freeBytes = () => {
      const s = fs.statfsSync(mountPoint);
      return s.bavail * s.bsize;
    };
    /** Fills the file system until `leave` bytes are free. */
    const fillUntil = (leave: number) => fs.writeFileSync(ballast(), Buffer.alloc(Math.max(0, freeBytes() - leave)));

    it('fails a face log whose overlay video meets ENOSPC, removes its partial results, and runs the next one once space is freed', async () => {
      // No floor: only the real ENOSPC stops the job.
      svc = await startTestService({ MIN_FREE_DISK_MB: '0' }, dataDir);
      // Room for the upload and the database's few writes, not for the 0.85 MB overlay video.
      fillUntil(fs.statSync(LONG).size + 256 * 1024);
      const id = await submitFaceLog(svc, LONG);
      const task = await waitTask(svc, 'face_log', id, complete);
      await expectFailedFull(svc, task, /^The disk of the appliance is full: the results could not be written \(no space left on device\); the job was stopped and its partial results removed/);
      expect(fs.readdirSync(path.join(dataDir, 'results'))).to.deep.equal([]);

      // The service is up, its database answers, and /healthz says what happened.
      const sick = await health(svc);
      expect(sick.status).to.equal(503);
      expect(sick.body.health.database.ok).to.equal(true);
      expect(sick.body.health.workers.alive).to.equal(1);
      expect(sick.body.health.disk.job_out_of_space.job_id).to.equal(id);
      expect(sick.body.error.message).to.match(new RegExp(`job ${id} ran out of disk space \\d+ s ago`));
      const history = await api(`${svc.url}/face_detect`);
      expect(history.body.tasks.map((t: Task) => t.job_id)).to.deep.equal([id]);

      fs.rmSync(ballast());
      await expectSucceeds(svc, LONG);
      expect((await health(svc)).status).to.equal(200);
    });

    it('stops a running face log when another writer takes free space below the running-job floor', async () => {
      // MIN_FREE_DISK_MB 8: uploads need 8 MiB free; running face logs stop below 2 MiB.
      svc = await startTestService({ MIN_FREE_DISK_MB: '8' }, dataDir);
      const id = await submitFaceLog(svc, LONG);
      await waitTask(svc, 'face_log', id, inFrameLoop);
      fillUntil(1.5 * MiB);
      const task = await waitTask(svc, 'face_log', id, complete, 30_000);
      // The face log goes on writing its overlay until the guard looks: 1.5 MiB free or a little less.
      await expectFailedFull(svc, task, /^The disk of the appliance is nearly full \([01] MiB free, 2 MiB are kept free while jobs run\)/);
      expect(svc.service.pool.restarts).to.equal(0);
      // Uploads are refused meanwhile (the upload floor is 8 MiB).
      const refused = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: SHORT }) });
      expect(refused.status).to.equal(507);
      expect((await health(svc)).body.health.disk.ok).to.equal(false);

      fs.rmSync(ballast());
      await expectSucceeds(svc, SHORT);
      const well = await health(svc);
      expect(well.status, JSON.stringify(well.body)).to.equal(200);
    });
  });
});
