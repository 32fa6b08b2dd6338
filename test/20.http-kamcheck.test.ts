// /kamcheck over real HTTP: envelopes, statuses and error codes as the seed and SPEC say.
import fs from 'node:fs';
import { expect } from 'chai';
import { api, form, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { describeBackends } from './helpers/backends.js';

const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const CAUSES = ['blur', 'moved', 'masked', 'exposure', 'frozen', 'black'];

function expectError(res: { status: number; body: any }, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.status).to.equal('error');
  expect(res.body.error.code).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.empty;
}

describeBackends('HTTP /kamcheck', function (backend) {
  let media: TestMedia;
  let svc: TestService;

  before(() => {
    media = testMedia();
  });
  beforeEach(async () => {
    svc = await start();
  });
  afterEach(async () => {
    await svc.stop();
  });

  const start = async (env: Record<string, string> = {}) => startTestService({ ...(await backend.env()), ...env });

  const post = (files: Record<string, string>, fields: Record<string, string> = {}) =>
    api(`${svc.url}/kamcheck`, { method: 'POST', body: form(files, fields) });

  it('runs a check and answers with the finished task in the POST itself', async () => {
    // A generous wait (the default is 2 s): the first job also waits for the worker to load OpenCV.
    await svc.stop();
    svc = await start({ KAMCHECK_WAIT_MS: '15000' });
    // Unknown form fields are ignored.
    const res = await post({ video: media.clip, image: media.reference }, { camera: 'lobby-3', max_frames: '7' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body.status).to.equal('success');
    const task = res.body.task;
    expect(task.analytic).to.equal('kamcheck');
    expect(task.job_id).to.match(/^[0-9a-f-]{36}$/);
    expect(task.start_time).to.match(HTTP_DATE);
    expect(task.complete).to.equal(true);
    expect(task.success).to.equal(true);
    expect(task.finish_time).to.match(HTTP_DATE);
    expect(task.probability).to.be.a('number').within(0, 100);
    expect(task.message).to.equal(`Tampering probability ${task.probability}%`);
    expect(Object.keys(task.causes).sort()).to.deep.equal([...CAUSES].sort());
    for (const c of CAUSES) expect(task.causes[c]).to.be.within(0, 100);
    expect(task.not_judged).to.deep.equal([]);
    // The same people-only scene at another time: not tampered.
    expect(task.probability).to.be.below(50);

    const again = await api(`${svc.url}/kamcheck/${task.job_id}`);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ status: 'success', task });
    // The uploads are deleted once the check is finished; nothing is left behind.
    expect(fs.readdirSync(`${svc.dataDir}/jobs`)).to.deep.equal([]);
    expect(fs.readdirSync(svc.service.tmpDir)).to.deep.equal([]);
  });

  it('returns complete:false at once when told not to wait, and the task completes later', async () => {
    await svc.stop();
    svc = await start({ KAMCHECK_WAIT_MS: '0' });
    const res = await post({ video: media.clipHd, image: media.referenceHd });
    expect(res.status).to.equal(200);
    const task = res.body.task;
    expect(task.complete).to.equal(false);
    expect(task).to.have.all.keys('analytic', 'job_id', 'complete', 'message', 'start_time');
    expect(task.message).to.be.a('string').and.not.empty;
    const done = await waitComplete(`${svc.url}/kamcheck/${task.job_id}`);
    expect(done.success).to.equal(true);
    expect(done.start_time).to.equal(task.start_time);
  });

  it('turns a failure found while processing into a finished task with success false and an error', async () => {
    // A PNG whose header is intact but whose pixel data is cut off passes the upload checks.
    const cut = `${svc.dataDir}/cut.png`;
    fs.writeFileSync(cut, fs.readFileSync(media.reference).subarray(0, 2000));
    const res = await post({ video: media.clip, image: cut });
    expect(res.status).to.equal(200);
    const task = await waitComplete(`${svc.url}/kamcheck/${res.body.task.job_id}`);
    expect(task.complete).to.equal(true);
    expect(task.success).to.equal(false);
    expect(task.finish_time).to.match(HTTP_DATE);
    expect(task).to.not.have.property('probability');
    expect(task.error.code).to.equal('decode_failed');
    expect(task.message).to.equal(task.error.message);
    expect(task.message).to.equal('The image cannot be decoded (corrupt or unsupported file)');
    // The service is unharmed.
    const next = await post({ video: media.clip, image: media.reference });
    expect(next.body.task.success).to.equal(true);
  });

  it('lists the last 50 checks, newest first', async () => {
    // No worker: the records written straight to the store stay queued.
    await svc.stop();
    svc = await start({ WORKERS: '0', KAMCHECK_WAIT_MS: '0' });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await post({ video: media.clip, image: media.reference });
      ids.push(res.body.task.job_id);
    }
    for (let i = 0; i < 52; i++) {
      await svc.service.jobs.insert({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, analytic: 'kamcheck', input: {} });
    }
    const list = await api(`${svc.url}/kamcheck`);
    expect(list.status).to.equal(200);
    expect(list.body.status).to.equal('success');
    expect(list.body.tasks).to.have.length(50);
    expect(list.body.tasks[0].job_id).to.equal('00000000-0000-4000-8000-000000000051');
    expect(list.body.tasks.map((t: any) => t.job_id)).to.not.include(ids[0]);
    for (const t of list.body.tasks) expect(t.analytic).to.equal('kamcheck');
  });

  it('answers 400 missing_file when a file is missing', async () => {
    expectError(await post({ image: media.reference }), 400, 'missing_file');
    expectError(await post({ video: media.clip }), 400, 'missing_file');
    expectError(await post({}, { video: 'not a file' }), 400, 'missing_file');
  });

  it('answers 400 when a file field is sent twice or the body is not multipart', async () => {
    const fd = form({ video: media.clip, image: media.reference });
    fd.append('video', new Blob([fs.readFileSync(media.clip)]), 'second.mp4');
    expectError(await api(`${svc.url}/kamcheck`, { method: 'POST', body: fd }), 400, 'invalid_parameter');
    expectError(
      await api(`${svc.url}/kamcheck`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_parameter',
    );
  });

  it('answers 415 for uploads that are not decodable video or images', async () => {
    expectError(await post({ video: media.textAsVideo, image: media.reference }), 415, 'unsupported_media');
    expectError(await post({ video: media.truncated, image: media.reference }), 415, 'unsupported_media');
    expectError(await post({ video: media.clip, image: media.textAsVideo }), 415, 'unsupported_media');
    expectError(await post({ video: media.jpeg, image: media.reference }), 415, 'unsupported_media');
    const empty = `${svc.dataDir}/empty.mp4`;
    fs.writeFileSync(empty, '');
    expectError(await post({ video: empty, image: media.reference }), 415, 'unsupported_media');
  });

  it('answers 422 for more than 25 frames or a reference of another size, and makes no job', async () => {
    const tooLong = await post({ video: media.clip26, image: media.reference });
    expectError(tooLong, 422, 'too_many_frames');
    expect(tooLong.body.error.message).to.contain('26');
    const mismatch = await post({ video: media.clip, image: media.referenceLarge });
    expectError(mismatch, 422, 'resolution_mismatch');
    expect(mismatch.body.error.message).to.contain('320x240').and.contain('640x480');
    const list = await api(`${svc.url}/kamcheck`);
    expect(list.body.tasks).to.deep.equal([]);
    expect(fs.readdirSync(`${svc.dataDir}/jobs`)).to.deep.equal([]);
    expect(fs.readdirSync(svc.service.tmpDir)).to.deep.equal([]);
  });

  it('answers 404 for unknown jobs and endpoints', async () => {
    expectError(await api(`${svc.url}/kamcheck/5b0c4b1e-0000-4000-8000-000000000000`), 404, 'not_found');
    expectError(await api(`${svc.url}/kamcheck/..%2F..%2Fetc%2Fpasswd`), 404, 'not_found');
    expectError(await api(`${svc.url}/no_such_analytic`), 404, 'not_found');
    expectError(await api(`${svc.url}/no_such_analytic`, { method: 'POST', body: form({ video: media.clip }) }), 404, 'not_found');
  });

  it('answers 413 for uploads over the limit, before reading the whole body', async () => {
    await svc.stop();
    svc = await start({ MAX_UPLOAD_MB: '1' });
    const big = `${svc.dataDir}/big.mp4`;
    fs.writeFileSync(big, Buffer.alloc(3 * 1024 * 1024, 7));
    const res = await post({ video: big, image: media.reference });
    expectError(res, 413, 'payload_too_large');
    expect(fs.readdirSync(svc.service.tmpDir)).to.deep.equal([]);
  });

  it('answers 503 busy with Retry-After when the queue is full', async () => {
    await svc.stop();
    svc = await start({ QUEUE_LIMIT: '1', KAMCHECK_WAIT_MS: '0' });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => post({ video: media.clipHd, image: media.referenceHd })),
    );
    const busy = results.filter((r) => r.status === 503);
    const accepted = results.filter((r) => r.status === 200);
    expect(accepted.length).to.be.at.least(1);
    expect(busy.length).to.be.at.least(1);
    expectError(busy[0], 503, 'busy');
    expect(Number(busy[0].headers.get('retry-after'))).to.be.above(0);
    for (const r of accepted) expect((await waitComplete(`${svc.url}/kamcheck/${r.body.task.job_id}`)).success).to.equal(true);
  });
});
