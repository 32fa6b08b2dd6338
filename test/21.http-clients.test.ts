// Clients written for the original service: multipart bodies as different clients send them
// (raw bytes, so nothing normalises them on the way), Python's requests, the error envelope's
// top-level message, the Server header, history paging and a 503 that a retrying client gets past.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { AUTH, PASSWORD, USER, api, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { rawRequest } from './helpers/raw-http.js';
import { SERVER_HEADER } from '../lib/version.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { describeBackends } from './helpers/backends.js';
import { pythonJson, runPython } from './helpers/python.js';

const facelogFixture = (scenario: string) => facelogVideo(scenario).file;

interface Part {
  /** The whole Content-Disposition value, as a client would write it. */
  disposition: string;
  contentType?: string;
  body: Buffer | string;
}

const BOUNDARY = '----appliance-test-7MA4YWxkTrZu0gW';

/** A multipart/form-data body; `eol` and the framing around it vary as clients vary them. */
function multipart(parts: Part[], opts: { eol?: string; preamble?: string; epilogue?: string } = {}): Buffer {
  const eol = opts.eol ?? '\r\n';
  const chunks: Buffer[] = [];
  if (opts.preamble) chunks.push(Buffer.from(opts.preamble + eol));
  for (const p of parts) {
    let head = `--${BOUNDARY}${eol}Content-Disposition: ${p.disposition}${eol}`;
    if (p.contentType) head += `Content-Type: ${p.contentType}${eol}`;
    chunks.push(Buffer.from(head + eol, 'utf8'), Buffer.from(p.body), Buffer.from(eol));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--${opts.epilogue === undefined ? eol : eol + opts.epilogue}`));
  return Buffer.concat(chunks);
}

function post(svc: TestService, analytic: string, body: Buffer) {
  return api(`${svc.url}/${analytic}`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: new Uint8Array(body),
  });
}

const file = (field: string, filename: string, path_: string, contentType?: string): Part => ({
  disposition: `form-data; name="${field}"; filename="${filename}"`,
  contentType,
  body: fs.readFileSync(path_),
});

/** The first fenced block of `lang` in the README's API section. */
function readmeBlock(lang: string): string {
  const readme = fs.readFileSync('README.md', 'utf8');
  const api = readme.slice(readme.indexOf('\n## API\n'), readme.indexOf('\n## ', readme.indexOf('\n## API\n') + 5));
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(api);
  if (!m) throw new Error(`no ${lang} block in the README's API section`);
  return m[1];
}

// The service under test runs in this process: a child must be waited for without blocking the
// event loop, or the service could never answer it.
const execFileAsync = promisify(execFile);

// On both job stores: the clients' uploads become jobs, and history pages are read from the store.
describeBackends('Clients of the original service', function (backend) {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService;

  const start = async (env: Record<string, string> = {}) => startTestService({ ...(await backend.env()), ...env });

  before(async () => {
    media = testMedia();
    svc = await start({ KAMCHECK_WAIT_MS: '0' });
  });
  after(async () => {
    await svc?.stop(); // removes its data folder
  });

  describe('multipart as RFC 7578 says: a part with a filename is a file', () => {
    const cases: [string, string | undefined][] = [
      ['no part Content-Type (Python requests)', undefined],
      ['text/plain', 'text/plain'],
      ['application/octet-stream', 'application/octet-stream'],
      ['a media type', 'video/mp4'],
    ];
    for (const [name, type] of cases) {
      it(`file parts with ${name} are accepted as files`, async () => {
        const res = await post(svc, 'kamcheck', multipart([file('video', 'clip.mp4', media.clip, type), file('image', 'ref.png', media.reference, type)]));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.task.analytic).to.equal('kamcheck');
        const task = await waitComplete(`${svc.url}/kamcheck/${res.body.task.job_id}`);
        expect(task.success, task.message).to.equal(true);
        expect(task.probability).to.be.within(0, 100);
      });
    }

    it('a quoted file name with spaces and non-ASCII, raw UTF-8 or as RFC 5987 filename*, is kept', async () => {
      const names = [
        ['form-data; name="video"; filename="Lobby cam Åsa (1).jpg"', 'Lobby cam Åsa (1).jpg'],
        [`form-data; name="video"; filename="fallback.jpg"; filename*=UTF-8''Caf%C3%A9%20%E2%80%94%20entr%C3%A9e.jpg`, 'Café — entrée.jpg'],
        [`form-data; name="video"; filename*=utf-8''%E5%85%A5%E5%8F%A3.jpg`, '入口.jpg'],
        ['form-data; name="video"; filename="say \\"cheese\\".jpg"', 'say "cheese".jpg'],
      ];
      for (const [disposition, expected] of names) {
        const res = await post(svc, 'face_log', multipart([{ disposition, body: fs.readFileSync(media.jpeg) }]));
        expect(res.status, `${disposition}: ${JSON.stringify(res.body)}`).to.equal(200);
        const task = await waitComplete(`${svc.url}/face_log/${res.body.task.job_id}`, 60_000);
        expect(task.success, task.message).to.equal(true);
        expect(task.input_video, disposition).to.equal(expected);
      }
    });

    it('framing variants: preamble and epilogue, no CRLF after the closing boundary, LF-only lines', async () => {
      const parts = () => [file('video', 'clip.mp4', media.clip), file('image', 'ref.png', media.reference)];
      for (const opts of [{ preamble: 'This is a multi-part message in MIME format.', epilogue: 'trailing words\r\n' }, { epilogue: '' }]) {
        const body = multipart(parts(), opts);
        const trimmed = opts.epilogue === '' ? body.subarray(0, body.length - 2) : body;
        const res = await post(svc, 'kamcheck', trimmed);
        expect(res.status, JSON.stringify({ opts, body: res.body })).to.equal(200);
      }
      // Bare LF line endings break RFC 2046: the parser finds no boundary line, and a client that
      // sends them gets a 400 that says the body is malformed, never a 5xx or a job.
      const res = await post(svc, 'kamcheck', multipart(parts(), { eol: '\n' }));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_parameter');
      expect(res.body.message).to.match(/^malformed multipart body/);
    });

    it('a part without a filename is a field, even with a Content-Type: "video" sent as a field is missing as a file', async () => {
      const res = await post(svc, 'kamcheck', multipart([
        { disposition: 'form-data; name="video"', contentType: 'video/mp4', body: 'not a file' },
        file('image', 'ref.png', media.reference),
      ]));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('missing_file');
      expect(res.body.message).to.match(/"video" is required/);
    });

    it('a form field over the field limit is a 400 naming the field, not a 413', async () => {
      const res = await post(svc, 'face_log', multipart([
        file('video', 'still.jpg', media.jpeg),
        { disposition: 'form-data; name="notes"', body: 'x'.repeat(1024 * 1024 + 10) },
      ]));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_parameter');
      expect(res.body.message).to.contain('"notes"');
    });
  });

  describe('error bodies and the Server header', () => {
    it('every error carries message at the top level, equal to error.message', async () => {
      const responses = [
        await api(`${svc.url}/kamcheck`, { auth: null }),
        await api(`${svc.url}/kamcheck/00000000-0000-4000-8000-000000000000`),
        await api(`${svc.url}/nowhere`),
        await post(svc, 'kamcheck', multipart([file('image', 'ref.png', media.reference)])),
        await api(`${svc.url}/face_detect/0/10`),
      ];
      expect(responses.map((r) => r.status)).to.deep.equal([401, 404, 404, 400, 400]);
      for (const r of responses) {
        expect(r.body.status).to.equal('error');
        expect(r.body.message).to.be.a('string').and.not.empty;
        expect(r.body.message).to.equal(r.body.error.message);
      }
    });

    it('every response names the service and its version: success, error, download, malformed HTTP', async () => {
      const version = JSON.parse(fs.readFileSync('package.json', 'utf8')).version;
      expect(SERVER_HEADER).to.equal(`video-analytics-appliance/${version}`);
      for (const url of [`${svc.url}/kamcheck`, `${svc.url}/healthz`, `${svc.url}/openapi.json`, `${svc.url}/nowhere`]) {
        const res = await fetch(url, { headers: { authorization: AUTH } });
        expect(res.headers.get('server'), url).to.equal(SERVER_HEADER);
      }
      expect((await fetch(`${svc.url}/kamcheck`)).headers.get('server')).to.equal(SERVER_HEADER);
      const raw = await rawRequest(svc.url, 'GET /kamcheck HTTP/1.1\r\nHost: x\r\nBad\x00Header: y\r\nConnection: close\r\n\r\n');
      expect(raw.status).to.equal(400);
      expect(raw.headers.server).to.equal(SERVER_HEADER);
      expect(raw.body.message).to.equal('the request is not valid HTTP/1.1');
    });
  });

  describe('history paging', () => {
    let paged: TestService;
    const ids: Record<string, string[]> = { kamcheck: [], face_log: [] };

    before(async () => {
      // Records written straight to the store (no worker runs them: WORKERS=0): paging reads the store only.
      paged = await start({ WORKERS: '0' });
      const t0 = Date.now() - 60_000;
      for (let i = 0; i < 55; i++) {
        for (const analytic of ['kamcheck', 'face_log']) {
          const id = `00000000-0000-4000-8000-${String(i).padStart(6, '0')}${analytic === 'kamcheck' ? '000001' : '000002'}`;
          await paged.service.jobs.insert({ id, analytic, input: { frames: 10, startFrame: 0, maxFrames: 0 }, createdAt: t0 + i });
          ids[analytic].unshift(id); // newest first
        }
      }
    });
    after(async () => {
      await paged?.stop();
    });

    const list = async (p: string) => {
      const res = await api(`${paged.url}${p}`);
      expect(res.status, `${p}: ${JSON.stringify(res.body)}`).to.equal(200);
      return (res.body.tasks as { job_id: string }[]).map((t) => t.job_id);
    };

    for (const [analytic, history] of [['kamcheck', '/kamcheck'], ['face_log', '/face_detect'], ['face_log', '/face_log']]) {
      it(`${history}: /<page>/<per_page> and ?page=&per_page= over every task; the plain path keeps the last 50`, async () => {
        const all = ids[analytic];
        expect(await list(history)).to.deep.equal(all.slice(0, 50));
        expect(await list(`${history}/1/3`)).to.deep.equal(all.slice(0, 3));
        expect(await list(`${history}/2/20`)).to.deep.equal(all.slice(20, 40));
        expect(await list(`${history}/3/20`)).to.deep.equal(all.slice(40, 55));
        expect(await list(`${history}/6/11`)).to.deep.equal([]);
        expect(await list(`${history}/1/100`)).to.deep.equal(all);
        expect(await list(`${history}?page=2&per_page=5`)).to.deep.equal(all.slice(5, 10));
        expect(await list(`${history}?per_page=4`)).to.deep.equal(all.slice(0, 4));
        expect(await list(`${history}?page=2`)).to.deep.equal(all.slice(50, 55));
        for (const bad of ['/0/10', '/1/0', '/1/101', '/x/10', '/-1/10', '/1/1.5', '?page=0', '?per_page=500', '?page=abc']) {
          const res = await api(`${paged.url}${history}${bad}`);
          expect(res.status, bad).to.equal(400);
          expect(res.body.error.code).to.equal('invalid_parameter');
          expect(res.body.message, bad).to.match(/page/);
        }
      });
    }
  });

  describe("the README's API examples, run as written", () => {
    let dir: string;
    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-readme-'));
      fs.copyFileSync(media.clip, path.join(dir, 'clip.mp4'));
      fs.copyFileSync(media.reference, path.join(dir, 'reference.png'));
      fs.copyFileSync(facelogFixture('single'), path.join(dir, 'lobby.mp4'));
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = () => ({ APPLIANCE: svc.url, CREDS: `${USER}:${PASSWORD}` });

    it('curl: every line answers success (JOB_ID is the job its POST made; the export line is the only one set here)', async () => {
      const lines = readmeBlock('sh').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
      expect(lines[0]).to.match(/^export APPLIANCE=\S+ CREDS=\S+$/);
      const curls = lines.slice(1);
      expect(curls.length).to.be.at.least(5);
      let jobId = '';
      for (const line of curls) {
        expect(line).to.match(/^curl /);
        const { stdout: out } = await execFileAsync('bash', ['-c', line.replace('JOB_ID', jobId)], { cwd: dir, env: { ...process.env, ...env() } });
        const body = JSON.parse(out);
        expect(body.status, `${line}: ${out}`).to.equal('success');
        if (/-F video=@lobby/.test(line)) jobId = body.task.job_id;
      }
      expect(jobId).to.match(/^[0-9a-f-]{36}$/);
    });

    it('python requests: the face log from upload to saved result files', async () => {
      const run = await runPython(readmeBlock('python'), env(), dir);
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^Found \d+ sightings, \d+ tracks, \d+ faces$/m);
      const saved = [...run.stdout.matchAll(/^saved (\S+)$/gm)].map((m) => m[1]);
      expect(saved.length).to.be.at.least(3);
      for (const name of saved) expect(fs.statSync(path.join(dir, name)).size, name).to.be.greaterThan(0);
      expect(saved[0]).to.match(/^face_log_[0-9a-f-]{36}\.mp4$/);
    });
  });

  describe('a full queue', () => {
    it('answers 503 busy with the envelope and Retry-After; a client that retries after that time gets in', async () => {
      const busy = await start({ QUEUE_LIMIT: '1', KAMCHECK_WAIT_MS: '0' });
      try {
        // The one slot: a face log of a few seconds, longer than the first Retry-After.
        const first = await post(busy, 'face_log', multipart([file('video', 'single.mp4', facelogFixture('single'))]));
        expect(first.status).to.equal(200);
        const refused = await post(busy, 'kamcheck', multipart([file('video', 'clip.mp4', media.clip), file('image', 'ref.png', media.reference)]));
        expect(refused.status).to.equal(503);
        expect(refused.body.error.code).to.equal('busy');
        expect(refused.body.message).to.match(/retry/i);
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).to.be.within(1, 60);
        // urllib3's Retry, as a Python client of the original service would configure it.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-client-'));
        try {
          const result = await pythonJson(`
import json, os, time, requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
session = requests.Session()
retry = Retry(total=20, status_forcelist=[503], allowed_methods=None, respect_retry_after_header=True, backoff_factor=0)
session.mount("http://", HTTPAdapter(max_retries=retry))
started = time.time()
r = session.post(os.environ["APPLIANCE"] + "/kamcheck", auth=(os.environ["USER_NAME"], os.environ["PASSWORD"]),
                 files={"video": open(os.environ["CLIP"], "rb"), "image": open(os.environ["REFERENCE"], "rb")})
print(json.dumps({"status": r.status_code, "body": r.json(), "waited": time.time() - started, "retries": len(r.raw.retries.history)}))
`, { APPLIANCE: busy.url, USER_NAME: USER, PASSWORD, CLIP: media.clip, REFERENCE: media.reference }, dir);
          expect(result.status, JSON.stringify(result.body)).to.equal(200);
          // It was refused at least once and waited as told before it got in.
          expect(result.retries, JSON.stringify(result)).to.be.at.least(1);
          expect(result.waited).to.be.at.least(retryAfter * 0.9);
          expect(result.body.task.analytic).to.equal('kamcheck');
          const task = await waitComplete(`${busy.url}/kamcheck/${result.body.task.job_id}`);
          expect(task.success).to.equal(true);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      } finally {
        await busy.stop();
      }
    });
  });
});
