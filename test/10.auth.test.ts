// HTTP Basic on every endpoint, and credentials generated on a first start without any.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api, removeTempDir, startTestService, tempDataDir, type TestService, USER } from '../testkit/service.js';

describe('authentication', function () {
  let svc: TestService;
  /** A data folder a test passed in: the service's stop() leaves it, so it goes after that. */
  let dataDir: string | undefined;
  afterEach(async () => {
    await svc?.stop();
    if (dataDir) removeTempDir(dataDir);
    dataDir = undefined;
  });

  it('refuses requests without valid Basic credentials, with WWW-Authenticate', async () => {
    svc = await startTestService();
    const cases: (string | null)[] = [
      null,
      'Basic ' + Buffer.from(`${USER}:wrong`).toString('base64'),
      'Basic ' + Buffer.from(`someone:correct horse battery staple`).toString('base64'),
      'Basic !!!notbase64',
      'Basic ' + Buffer.from('no-colon').toString('base64'),
      'Bearer abc.def.ghi',
      'Digest username="tester"',
    ];
    for (const auth of cases) {
      for (const p of ['/kamcheck', '/kamcheck/abc', '/face_detect', '/nothing']) {
        const res = await api(`${svc.url}${p}`, { auth });
        expect(res.status, `${auth} ${p}`).to.equal(401);
        expect(res.body).to.deep.include({ status: 'error' });
        expect(res.body.error.code).to.equal('unauthorized');
        expect(res.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+"/);
      }
    }
    const ok = await api(`${svc.url}/kamcheck`);
    expect(ok.status).to.equal(200);
    // The password never reaches the logs.
    expect(JSON.stringify(svc.logs)).to.not.contain('correct horse');
  });

  it('accepts any of several configured credentials', async () => {
    svc = await startTestService({ AUTH_CREDENTIALS: 'a:one,b:two' });
    for (const pair of ['a:one', 'b:two']) {
      const res = await api(`${svc.url}/kamcheck`, { auth: 'Basic ' + Buffer.from(pair).toString('base64') });
      expect(res.status).to.equal(200);
    }
    const crossed = await api(`${svc.url}/kamcheck`, { auth: 'Basic ' + Buffer.from('a:two').toString('base64') });
    expect(crossed.status).to.equal(401);
  });

  it('generates a strong password on a first start without credentials, stored owner-only', async () => {
    dataDir = tempDataDir();
    svc = await startTestService({ AUTH_CREDENTIALS: '' }, dataDir);
    const file = path.join(dataDir, 'credentials');
    expect(svc.service.credentials.generated).to.equal(true);
    expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
    const [user, password] = fs.readFileSync(file, 'utf8').trim().split(':');
    expect(password.length).to.be.at.least(20);
    const auth = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
    expect((await api(`${svc.url}/kamcheck`, { auth })).status).to.equal(200);
    expect((await api(`${svc.url}/kamcheck`, { auth: null })).status).to.equal(401);
    await svc.stop();
    // A second start keeps the same credentials.
    svc = await startTestService({ AUTH_CREDENTIALS: '' }, dataDir);
    expect(svc.service.credentials.generated).to.equal(false);
    expect((await api(`${svc.url}/kamcheck`, { auth })).status).to.equal(200);
  });
});
