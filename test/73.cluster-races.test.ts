// Races of several nodes that the job store's fences alone do not cover: an upload whose job is
// stored just before the database stops answering, and a node paused past its lease whose late
// run of a face log must not touch the files of the run that took the job over.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { api, fetchChecked, form, PASSWORD, removeTempDir, spawnService, startTestService, tempDataDir, USER, type ServiceProcess } from '../testkit/service.js';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';
import { testMedia } from '../testkit/media.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { DatabaseUnavailableError } from '../lib/db/errors.js';
import { parseFaceLogXml } from '../testkit/facelog-fixtures/read-xml.js';
import { until } from './helpers/until.js';

describe('cluster races', function () {
  this.timeout(180_000);
  let postgres: PrivatePostgres;
  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });

  it('answers an upload with its job when the database stops answering right after storing it', async () => {
    const media = testMedia();
    const svc = await startTestService({ DATABASE_URL: postgres.url, KAMCHECK_WAIT_MS: '0', WORKERS: '0', NODE_ID: 'api-node' });
    try {
      const { jobs: store } = svc.service;
      // Reads fail from here on, as when the database goes down between the insert and the answer.
      const get = store.get;
      store.get = async () => {
        throw new DatabaseUnavailableError(new Error('Connection terminated unexpectedly'));
      };
      let answers;
      try {
        answers = [
          await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) }),
          await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: facelogVideo('single').file }) }),
        ];
      } finally {
        store.get = get;
      }
      // A 503 would have the client send them again: two more jobs.
      for (const res of answers) expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const stored = [...(await store.recent('kamcheck', 10)), ...(await store.recent('face_log', 10))].map((j) => j.id);
      expect(answers.map((res) => res.body.task.job_id)).to.deep.equal(stored);
    } finally {
      await svc.stop();
    }
  });

  describe('a node paused past its lease', () => {
    let dataDir: string;
    let videoDir: string;
    const nodes: ServiceProcess[] = [];
    let db: pg.Pool;
    after(async () => {
      for (const node of nodes) {
        node.child.kill('SIGCONT');
        node.child.kill('SIGKILL');
        await node.exited;
      }
      await db?.end();
      if (dataDir) removeTempDir(dataDir);
      if (videoDir) fs.rmSync(videoDir, { recursive: true, force: true });
    });

    it("loses its face log to another node, and its late run leaves the new run's files alone", async () => {
      dataDir = tempDataDir();
      // Four times the 255-frame fixture: the paused node's run is still in its frame loop when
      // the other node's run starts, whatever the machine's speed.
      videoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-long-'));
      const video = path.join(videoDir, 'long.mp4');
      execFileSync('ffmpeg', ['-y', '-v', 'error', '-stream_loop', '3', '-i', facelogVideo('reappear').file, '-c', 'copy', video]);
      const env = (id: string) => ({
        DATABASE_URL: postgres.url,
        DATA_DIR: dataDir,
        AUTH_CREDENTIALS: `${USER}:${PASSWORD}`,
        NODE_ID: id,
        WORKERS: '1',
        JOB_LEASE_S: '3',
        LOG_LEVEL: 'info',
        MIN_FREE_DISK_MB: '1',
      });
      nodes.push(...(await Promise.all(['node-a', 'node-b'].map((id) => spawnService(env(id))))));
      db = new pg.Pool({ connectionString: postgres.url, max: 1 });
      const job = async (id: string) => (await db.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0];

      const res = await api(`${nodes[0].url}/face_log`, { method: 'POST', body: form({ video }) });
      expect(res.status).to.equal(200);
      const id = res.body.task.job_id;
      const first = await until('the first run in its frame loop', async () => {
        const row = await job(id);
        return /^Processing frame [1-9]/.test(row.message) && row;
      }, 60_000);
      const [holder, other] = first.lease_owner === 'node-a' ? nodes : [nodes[1], nodes[0]];
      // A pause (a long GC, a frozen VM): no heartbeat; its worker process runs on.
      holder.child.kill('SIGSTOP');
      await until('the other node to run the job in its frame loop', async () => {
        const row = await job(id);
        return row.attempts === 2 && /^Processing frame [1-9]/.test(row.message);
      }, 60_000);
      holder.child.kill('SIGCONT');

      await until('the job to finish', async () => ['done', 'failed'].includes((await job(id)).state), 120_000);
      const done = await job(id);
      expect(done.error, 'the run that took over failed').to.equal(null);
      expect(done.state).to.equal('done');
      expect(done.attempts).to.equal(2);
      const doneBy = (node: ServiceProcess) => node.output().split('\n').filter((l) => l.includes('"job done"') && l.includes(id));
      // The line follows the job's clean-up, a moment after the store says done.
      await until('the `job done` line', async () => doneBy(other).length > 0, 10_000);
      expect(doneBy(other)).to.have.length(1);
      expect(doneBy(holder)).to.have.length(0);
      // The paused node's run resumed, and was stopped or its outcome refused.
      await until('the paused run to be discarded', async () => /is discarded/.test(holder.output()), 30_000);

      // The results on disk are those of the run that was recorded.
      const task = (await api(`${other.url}/face_log/${id}`)).body.task;
      expect(task.success).to.equal(true);
      const xml = await fetchChecked(task.results_xml);
      expect(xml.status).to.equal(200);
      const sightings = parseFaceLogXml(xml.body.toString('utf8')).sightings.map((s) => s.id);
      expect(sightings).to.deep.equal(task.sightings.map((s: { sighting_id: string }) => s.sighting_id));
      for (const link of [task.results_video, ...task.sightings.map((s: { thumbnail: string }) => s.thumbnail)]) {
        const file = await fetchChecked(link);
        expect(file.status, link).to.equal(200);
        expect(file.body.length).to.be.greaterThan(0);
      }
    });
  });
});
