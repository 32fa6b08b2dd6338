// Optional HTTPS: with TLS_CERT and TLS_KEY the service speaks TLS only; a half or broken
// configuration stops the start with a message naming the variable.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../lib/config.js';
import { AUTH, removeTempDir, startTestService, tempDataDir, type TestService } from '../testkit/service.js';
import { testMedia } from '../testkit/media.js';
import { checkResponse } from '../testkit/openapi-check.js';
import { httpRequest, rawConnect, rawRequest } from './helpers/raw-http.js';
import { selfSigned } from './helpers/self-signed.js';
import { multipartBody, multipartType } from '../testkit/hostile-corpus/multipart.js';

/** GET over HTTPS that verifies the server against `ca`; the response is checked against the OpenAPI document. */
function httpsGet(url: string, ca: Buffer): Promise<{ status: number; body: any; peerCn: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, headers: { authorization: AUTH } }, (res) => {
      const peer = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const body = /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : text;
        checkResponse({ method: 'GET', url, status: res.statusCode!, headers: res.headers as Record<string, string>, body });
        resolve({ status: res.statusCode!, body, peerCn: String(peer?.subject?.CN ?? '') });
      });
    });
    req.on('error', reject);
  });
}

describe('TLS', function () {
  this.timeout(60_000);
  let dir: string;
  let pair: { cert: string; key: string };
  let svc: TestService | undefined;
  before(() => {
    dir = tempDataDir();
    pair = selfSigned(dir);
  });
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });
  after(() => removeTempDir(dir));

  it('serves HTTPS with the configured certificate when TLS_CERT and TLS_KEY are set', async () => {
    svc = await startTestService({ TLS_CERT: pair.cert, TLS_KEY: pair.key, KAMCHECK_WAIT_MS: '0' });
    expect(svc.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await httpsGet(`${svc.url}/kamcheck`, fs.readFileSync(pair.cert));
    expect(res.status).to.equal(200);
    expect(res.peerCn).to.equal('127.0.0.1');
    expect((await httpsGet(`${svc.url}/healthz`, fs.readFileSync(pair.cert))).body.health.healthy).to.equal(true);

    // An upload over TLS.
    const media = testMedia();
    const body = multipartBody([
      { name: 'video', filename: 'clip.mp4', data: fs.readFileSync(media.clip) },
      { name: 'image', filename: 'reference.png', data: fs.readFileSync(media.reference) },
    ]);
    const upload = await rawRequest(svc.url, httpRequest('POST', '/kamcheck', [
      ['Host', '127.0.0.1'], ['Authorization', AUTH], ['Connection', 'close'],
      ['Content-Type', multipartType()], ['Content-Length', body.length],
    ], body));
    expect(upload.status, JSON.stringify(upload.body)).to.equal(200);
    expect(upload.body.task.analytic).to.equal('kamcheck');

    // Nothing is served in clear text on the TLS port.
    const { socket, response } = rawConnect(svc.url.replace('https:', 'http:'));
    socket.write(httpRequest('GET', '/kamcheck', [['Host', 'x'], ['Authorization', AUTH], ['Connection', 'close']]));
    const plain = await response.then((r) => r.status, (err: Error) => err.message);
    socket.destroy();
    expect(plain).to.not.equal(200);
  });

  it('stops the start with a precise configuration error when only one of the two is set or a file is unusable', () => {
    expect(() => loadConfig({ TLS_CERT: pair.cert })).to.throw(ConfigError, /^TLS_KEY: TLS_CERT is set but TLS_KEY is not/);
    expect(() => loadConfig({ TLS_KEY: pair.key })).to.throw(ConfigError, /^TLS_CERT: TLS_KEY is set but TLS_CERT is not/);
    const missing = path.join(dir, 'nope.crt');
    expect(() => loadConfig({ TLS_CERT: missing, TLS_KEY: pair.key })).to.throw(ConfigError, new RegExp(`^TLS_CERT: cannot read "${missing}": ENOENT`));
    const unreadable = path.join(dir, 'locked.key');
    fs.writeFileSync(unreadable, fs.readFileSync(pair.key), { mode: 0o000 });
    if (process.getuid?.() !== 0) {
      // root reads anything: the permission case only means something for other users.
      expect(() => loadConfig({ TLS_CERT: pair.cert, TLS_KEY: unreadable })).to.throw(ConfigError, /^TLS_KEY: cannot read .*EACCES/);
    }
    const other = selfSigned(dir, 'other');
    expect(() => loadConfig({ TLS_CERT: pair.cert, TLS_KEY: other.key })).to.throw(ConfigError, /not a usable PEM certificate and private key/);
    const garbage = path.join(dir, 'garbage.pem');
    fs.writeFileSync(garbage, 'not a certificate\n');
    expect(() => loadConfig({ TLS_CERT: garbage, TLS_KEY: pair.key })).to.throw(ConfigError, /^TLS_CERT: /);
    expect(loadConfig({}).tls).to.equal(null);
  });

  it('the service process exits with status 2 and names the variable', () => {
    const dataDir = tempDataDir();
    const run = spawnSync(process.execPath, [path.resolve('build/lib/main.js')], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUTH_CREDENTIALS: 'a:b', TLS_CERT: pair.cert, TLS_KEY: '' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    removeTempDir(dataDir);
    expect(run.status).to.equal(2);
    expect(run.stderr).to.contain('configuration error: TLS_KEY: TLS_CERT is set but TLS_KEY is not');
  });
});
