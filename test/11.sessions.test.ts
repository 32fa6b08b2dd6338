// Console sessions (/session): sign-in with the appliance's credentials, the cookie's attributes
// (HttpOnly, SameSite=Strict, Secure and __Host- under TLS), the cookie standing in for the Basic
// header on the API, the CSRF token every request that changes something needs, sign-out, and a
// changed password ending the session. A session's 401 never challenges Basic.
import { expect } from 'chai';
import { api, AUTH, PASSWORD, removeTempDir, startTestService, tempDataDir, type TestService, USER } from '../testkit/service.js';
import { httpRequest, rawRequest } from './helpers/raw-http.js';
import { selfSigned } from './helpers/self-signed.js';
import { describeBackends } from './helpers/backends.js';

const json = (body: unknown) => ({ 'content-type': 'application/json' as const, body: JSON.stringify(body) });

async function signIn(url: string, user = USER, password = PASSWORD) {
  const { body, ...headers } = json({ user, password });
  return api(`${url}/session`, { method: 'POST', auth: null, headers, body });
}

/** The cookie pair (`name=value`) of a Set-Cookie header. */
const cookiePair = (setCookie: string | null) => (setCookie ?? '').split(';')[0];

describeBackends('console sessions', function (backend) {
  let svc: TestService | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
    if (dataDir) removeTempDir(dataDir);
    dataDir = undefined;
  });

  it('signs in with the credentials: an HttpOnly, SameSite=Strict cookie for 12 h; wrong ones get a Session challenge, never Basic', async () => {
    svc = await startTestService(await backend.env());
    const none = await api(`${svc.url}/session`, { auth: null });
    expect(none.status).to.equal(200);
    expect(none.body).to.deep.equal({ status: 'success', session: null });

    for (const [user, password] of [[USER, 'wrong'], ['nobody', PASSWORD], [`${USER}:x`, PASSWORD]]) {
      const refused = await signIn(svc.url, user, password);
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('unauthorized');
      expect(refused.headers.get('www-authenticate')).to.match(/^Session realm="/);
      expect(refused.headers.get('set-cookie')).to.equal(null);
    }
    // Not JSON (what a cross-site form would send), or the wrong shape.
    const form = await api(`${svc.url}/session`, { method: 'POST', auth: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `user=${USER}&password=x` });
    expect(form.status).to.equal(400);
    expect(form.body.error.code).to.equal('invalid_parameter');
    const shape = await api(`${svc.url}/session`, { method: 'POST', auth: null, ...json({ user: USER }) });
    expect(shape.status).to.equal(400);

    const ok = await signIn(svc.url);
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('cache-control')).to.equal('no-store');
    expect(ok.body.session.user).to.equal(USER);
    expect(Date.parse(ok.body.session.expires_at) - Date.now()).to.be.within(12 * 3600_000 - 60_000, 12 * 3600_000 + 1000);
    const setCookie = ok.headers.get('set-cookie')!;
    expect(setCookie).to.match(/^vaa_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie.toLowerCase()).to.include('; path=/').and.include('; samesite=strict').and.include('; httponly').and.not.include('secure');
    const expires = Date.parse(/expires=([^;]+)/i.exec(setCookie)![1]);
    expect(expires - Date.parse(ok.body.session.expires_at)).to.be.within(-1000, 1000);
    // The cookie's token is nowhere in the answer or the logs; the password neither.
    const token = cookiePair(setCookie).split('=')[1];
    expect(JSON.stringify(ok.body)).to.not.include(token);
    expect(JSON.stringify(svc.logs)).to.not.include(token).and.not.include(PASSWORD);

    const again = await api(`${svc.url}/session`, { auth: null, headers: { cookie: cookiePair(setCookie) } });
    expect(again.body.session).to.deep.equal(ok.body.session);
  });

  it('the cookie stands in for Basic on the API; a request that changes something needs X-CSRF-Token; signing out ends it', async () => {
    svc = await startTestService(await backend.env());
    const ok = await signIn(svc.url);
    const cookie = cookiePair(ok.headers.get('set-cookie'));
    const csrf = ok.body.session.csrf_token as string;

    for (const p of ['/kamcheck', '/cameras', '/face_detect/1/5', '/healthz']) {
      const res = await api(`${svc.url}${p}`, { auth: null, headers: { cookie } });
      expect(res.status, p).to.equal(200);
    }
    // Without the token (or with another) a change is refused before it reaches the route; with it, the route answers.
    for (const headers of <Record<string, string>[]>[{ cookie }, { cookie, 'x-csrf-token': 'A'.repeat(43) }, { cookie, 'x-csrf-token': '' }]) {
      const res = await api(`${svc.url}/cameras/gate-1`, { method: 'DELETE', auth: null, headers });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.match(/^Session realm="/);
      expect(res.body.error.message).to.include('X-CSRF-Token');
    }
    const withToken = await api(`${svc.url}/cameras/gate-1`, { method: 'DELETE', auth: null, headers: { cookie, 'x-csrf-token': csrf } });
    expect(withToken.status).to.equal(404); // through to the route: no such camera
    // An Authorization header decides by itself, cookie or not.
    const wrongBasic = await api(`${svc.url}/kamcheck`, { auth: 'Basic ' + Buffer.from(`${USER}:wrong`).toString('base64'), headers: { cookie } });
    expect(wrongBasic.status).to.equal(401);
    expect(wrongBasic.headers.get('www-authenticate')).to.match(/^Basic realm="/);
    // Without the cookie nothing changed for API clients.
    const bare = await api(`${svc.url}/kamcheck`, { auth: null });
    expect(bare.status).to.equal(401);
    expect(bare.headers.get('www-authenticate')).to.match(/^Basic realm="/);

    // Sign-out needs the token too; afterwards the cookie opens nothing and is cleared.
    expect((await api(`${svc.url}/session`, { method: 'DELETE', auth: null, headers: { cookie } })).status).to.equal(401);
    const out = await api(`${svc.url}/session`, { method: 'DELETE', auth: null, headers: { cookie, 'x-csrf-token': csrf } });
    expect(out.status).to.equal(200);
    expect(out.body).to.deep.equal({ status: 'success', session: null });
    expect(out.headers.get('set-cookie')).to.match(/^vaa_session=;/);
    const after = await api(`${svc.url}/kamcheck`, { auth: null, headers: { cookie } });
    expect(after.status).to.equal(401);
    expect(after.headers.get('www-authenticate')).to.match(/^Session realm="/);
    expect((await api(`${svc.url}/session`, { auth: null, headers: { cookie } })).body.session).to.equal(null);
    // Basic still works as ever.
    expect((await api(`${svc.url}/kamcheck`, { auth: AUTH })).status).to.equal(200);
  });

  it('a session outlives a restart, and ends when its user\'s password changes', async () => {
    dataDir = tempDataDir();
    const env = await backend.env(); // one database for the three starts
    svc = await startTestService(env, dataDir);
    const cookie = cookiePair((await signIn(svc.url)).headers.get('set-cookie'));
    await svc.stop();
    svc = await startTestService(env, dataDir);
    expect((await api(`${svc.url}/kamcheck`, { auth: null, headers: { cookie } })).status).to.equal(200);
    await svc.stop();
    svc = await startTestService({ ...env, AUTH_CREDENTIALS: `${USER}:a new password` }, dataDir);
    const ended = await api(`${svc.url}/kamcheck`, { auth: null, headers: { cookie } });
    expect(ended.status).to.equal(401);
    expect(ended.headers.get('www-authenticate')).to.match(/^Session realm="/);
  });

  it('under TLS the cookie is Secure and __Host- prefixed', async () => {
    dataDir = tempDataDir();
    const pair = selfSigned(dataDir);
    svc = await startTestService({ ...(await backend.env()), TLS_CERT: pair.cert, TLS_KEY: pair.key });
    const body = Buffer.from(JSON.stringify({ user: USER, password: PASSWORD }));
    const host = new URL(svc.url).host;
    const res = await rawRequest(svc.url, httpRequest('POST', '/session', [['Host', host], ['Content-Type', 'application/json'], ['Content-Length', body.length], ['Connection', 'close']], body));
    expect(res.status).to.equal(200);
    const setCookie = res.headers['set-cookie'];
    expect(setCookie).to.match(/^__Host-vaa_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie.toLowerCase()).to.include('; secure').and.include('; httponly').and.include('; samesite=strict').and.include('; path=/');
    const cookie = cookiePair(setCookie);
    const get = await rawRequest(svc.url, httpRequest('GET', '/kamcheck', [['Host', host], ['Cookie', cookie], ['Connection', 'close']]));
    expect(get.status).to.equal(200);
    // The plain name is not read under TLS.
    const plain = await rawRequest(svc.url, httpRequest('GET', '/kamcheck', [['Host', host], ['Cookie', cookie.replace('__Host-', '')], ['Connection', 'close']]));
    expect(plain.status).to.equal(401);
    expect(plain.headers['www-authenticate']).to.match(/^Basic realm="/);
  });
});
