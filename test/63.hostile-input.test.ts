// The bad-input corpus (testkit/hostile-corpus/) against the running service: every request is
// answered with the SPEC's error envelope and its 4xx (never a 5xx), the service stays up,
// nothing is written outside DATA_DIR, no upload is left in its tmp folder, no job is created.
// Valid uploads with hostile file names are accepted and the names are never used as paths.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { AUTH, PASSWORD, USER, api, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia } from '../testkit/media.js';
import { checkRaw, httpRequest, rawConnect, rawRequest } from './helpers/raw-http.js';
import { makeBadMedia } from '../testkit/hostile-corpus/bad-media.js';
import { ESCAPE_NAME, hostileCorpus, type HostileCase } from '../testkit/hostile-corpus/cases.js';
import { multipartType } from '../testkit/hostile-corpus/multipart.js';
import { sleep } from './helpers/until.js';

const MAX_UPLOAD_MB = 2;
const MiB = 1024 * 1024;

describe('hostile and broken input', function () {
  this.timeout(120_000);
  let sandbox: string;
  let svc: TestService;
  let corpus: HostileCase[];
  let tmpBefore: Set<string>;

  before(async () => {
    const media = testMedia();
    sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-hostile-'));
    corpus = hostileCorpus(media, makeBadMedia(media, path.resolve('test/fixtures/generated/hostile')), {
      auth: AUTH,
      maxUploadBytes: MAX_UPLOAD_MB * MiB,
    });
    tmpBefore = new Set(fs.readdirSync(os.tmpdir()));
    svc = await startTestService({ MAX_UPLOAD_MB: String(MAX_UPLOAD_MB), KAMCHECK_WAIT_MS: '0', MIN_FREE_DISK_MB: '1' }, path.join(sandbox, 'data'));
  });
  after(async () => {
    await svc?.stop();
    // The service's data folder is inside the sandbox: the test's, not the helper's, to remove.
    if (sandbox) fs.rmSync(sandbox, { recursive: true, force: true });
  });

  /** The service is up, kept no upload and made no job. */
  async function expectUnharmed(jobsBefore: number): Promise<void> {
    const health = await api(`${svc.url}/healthz`);
    expect(health.status, 'service still healthy').to.equal(200);
    expect(await jobCount(), 'no job created').to.equal(jobsBefore);
    // The upload's temporary folder goes when its request ends; a connection cut by the server
    // may end the request a moment after the answer.
    await eventually(() => fs.readdirSync(path.join(svc.dataDir, 'tmp')).length === 0, 'tmp folder empty');
  }

  async function jobCount(): Promise<number> {
    return (await svc.service.jobs.countsByState()).reduce((n, c) => n + c.count, 0);
  }

  function expectNothingOutsideDataDir(): void {
    expect(fs.readdirSync(sandbox), 'nothing beside DATA_DIR').to.deep.equal(['data']);
    const newInTmp = fs.readdirSync(os.tmpdir()).filter((n) => !tmpBefore.has(n) && n.includes(ESCAPE_NAME));
    expect(newInTmp, 'no escaped file in the system tmp folder').to.deep.equal([]);
    for (const dir of ['/', '/etc', os.tmpdir(), process.cwd(), path.dirname(sandbox)]) {
      expect(fs.readdirSync(dir).filter((n) => n.includes(ESCAPE_NAME)), dir).to.deep.equal([]);
    }
  }

  function runCases(group: HostileCase['group']) {
    return async () => {
      const cases = corpus.filter((c) => c.group === group && c.expect !== 'accepted');
      expect(cases.length).to.be.above(0);
      const failures: string[] = [];
      for (const c of cases) {
        const jobs = await jobCount();
        const expected = c.expect as { status: number; code: string };
        try {
          const res = await rawRequest(svc.url, c.request); // also checked against the OpenAPI document
          expect(res.status, 'a 4xx').to.be.within(400, 499);
          expect(res.status).to.equal(expected.status);
          expect(res.body?.status).to.equal('error');
          expect(res.body.error.code).to.equal(expected.code);
          expect(res.body.error.message).to.be.a('string').and.not.empty;
          if (res.status === 401) expect(res.headers['www-authenticate']).to.match(/^Basic realm=/);
          await expectUnharmed(jobs);
        } catch (err) {
          failures.push(`${c.name}: ${(err as Error).message.split('\n')[0]}`);
        }
      }
      expectNothingOutsideDataDir();
      expect(failures, failures.join('\n')).to.deep.equal([]);
    };
  }

  it('tamper-check uploads: bad media, limits, broken forms, oversize bodies', runCases('kamcheck'));
  it('authentication: missing, malformed and wrong credentials, other schemes, bad header bytes', runCases('auth'));
  it('job ids and paths with path characters, forged result links, other methods', runCases('paths'));
  it('requests that are not HTTP', runCases('http'));
  // Needs the face-log routes (POST /face_log); written ahead of them.
  it('[face_log] face-log uploads: bad media and absurd parameters', runCases('face_log'));

  it('never logs credentials, right or wrong', () => {
    const logs = JSON.stringify(svc.logs);
    expect(logs).to.not.contain(PASSWORD);
    expect(logs).to.not.contain(AUTH.replace('Basic ', ''));
    expect(logs).to.not.contain(Buffer.from(`${USER}:wrong`).toString('base64'));
  });

  it('takes valid uploads with hostile file names and never uses the names as paths', async () => {
    const cases = corpus.filter((c) => c.expect === 'accepted');
    for (const c of cases) {
      const res = await rawRequest(svc.url, c.request);
      expect(res.status, `${c.name}: ${JSON.stringify(res.body)}`).to.equal(200);
      const id = res.body.task.job_id;
      const task = await waitComplete(`${svc.url}/kamcheck/${id}`, 60_000);
      expect(task.success, c.name).to.equal(true);
      const input = (await svc.service.jobs.get(id))!.input as { videoName: string; imageName: string };
      for (const name of [input.videoName, input.imageName]) {
        // eslint-disable-next-line no-control-regex
        expect(name, c.name).to.not.match(/[/\\\u0000-\u001f]/);
        expect(name.length, c.name).to.be.within(1, 200);
      }
    }
    expectNothingOutsideDataDir();
    // A finished job's uploads are removed just after its task reads complete.
    const jobsDir = path.join(svc.dataDir, 'jobs');
    await eventually(() => fs.readdirSync(jobsDir).length === 0, 'uploads of finished jobs removed');
  });

  it('answers 413 to an oversize upload before the body is sent, and keeps nothing', async () => {
    const jobs = await jobCount();
    const declared = 1024 * MiB; // 512 times the limit
    const head = httpRequest('POST', '/kamcheck', [
      ['Host', 'appliance'],
      ['Authorization', AUTH],
      ['Content-Type', multipartType()],
      ['Content-Length', declared],
    ]);
    const { socket, response } = rawConnect(svc.url);
    socket.on('error', () => {}); // the server closes while we send
    socket.write(head);
    let sent = 0;
    let answered = false;
    response.then(() => (answered = true), () => (answered = true));
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    // Keep sending (slowly, like a real upload) until the answer arrives.
    while (!answered && sent < declared && !socket.destroyed) {
      socket.write(chunk);
      sent += chunk.length;
      await sleep(5);
    }
    const res = await response;
    socket.destroy();
    checkRaw(head, res);
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('payload_too_large');
    expect(res.headers.connection).to.equal('close');
    expect(sent, 'bytes sent before the answer').to.be.below(8 * MiB);
    await expectUnharmed(jobs);
  });

  it('cleans up after a client that gives up half way through an upload', async () => {
    const jobs = await jobCount();
    const head = httpRequest('POST', '/kamcheck', [
      ['Host', 'appliance'],
      ['Authorization', AUTH],
      ['Content-Type', multipartType()],
      ['Content-Length', Math.round(1.5 * MiB)],
    ]);
    const { socket } = rawConnect(svc.url);
    socket.write(head);
    socket.write(Buffer.from(`--${multipartType().split('boundary=')[1]}\r\nContent-Disposition: form-data; name="video"; filename="a.mp4"\r\nContent-Type: video/mp4\r\n\r\n`));
    socket.write(Buffer.alloc(512 * 1024, 1));
    // Wait until the upload is being written, then vanish.
    await eventually(() => fs.readdirSync(path.join(svc.dataDir, 'tmp')).length > 0, 'upload started');
    socket.destroy();
    await expectUnharmed(jobs);
  });
});

async function eventually(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not true after ${ms} ms: ${what}`);
    await sleep(20);
  }
}
