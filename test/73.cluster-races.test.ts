// Races of several nodes that the job store's fences alone do not cover: an upload whose job is
// stored just before the database stops answering.
import { expect } from 'chai';
import { api, form, startTestService } from '../testkit/service.js';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';
import { testMedia } from '../testkit/media.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { StoreUnavailableError } from '../lib/jobs/errors.js';

describe('cluster races', function () {
  this.timeout(60_000);
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
      const { store } = svc.service;
      // Reads fail from here on, as when the database goes down between the insert and the answer.
      const get = store.get;
      store.get = async () => {
        throw new StoreUnavailableError(new Error('Connection terminated unexpectedly'));
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
});
