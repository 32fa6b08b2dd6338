// Named users, roles, API keys, throttled sign-in and the audit trail, with real requests to the
// service on both backends. Every response is checked against the OpenAPI document (api()).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { ACCESS_RULES } from '../lib/http/access.js';
import { ROLES, type Role } from '../lib/users/roles.js';
import { checkResponse } from '../testkit/openapi-check.js';
import { testMedia } from '../testkit/media.js';
import { api, AUTH, form, PASSWORD, removeTempDir, startTestService, tempDataDir, type TestService } from '../testkit/service.js';
import { describeBackends } from './helpers/backends.js';

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
const json = (method: string, body: unknown, auth?: string) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(auth ? { auth } : {}) });

/** A request from another local address (127.0.0.0/8 all reaches the service on 127.0.0.1). */
function apiFrom(from: string, url: string, auth: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { localAddress: from, headers: { authorization: auth, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        const body = (res.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : text;
        checkResponse({ method: 'GET', url, status: res.statusCode!, headers: h, body });
        resolve({ status: res.statusCode!, headers: h, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The sum of a metric's lines, read from another address than the tests' usual 127.0.0.1. */
async function counter(url: string, name: string): Promise<number> {
  const text = (await apiFrom('127.0.0.3', `${url}/metrics`, AUTH)).body as string;
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && !l.startsWith('#'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describeBackends('users, roles, keys, throttled sign-in, audit', function (backend) {
  this.timeout(180_000);
  let svc: TestService;
  const services: TestService[] = [];
  const start = async (env: Record<string, string> = {}, dataDir?: string) => {
    const s = await startTestService({ WORKERS: '0', ...(await backend.env()), ...env }, dataDir);
    services.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop();
  });

  /** A user of each role, created by the admin; resolves their Basic headers. */
  async function usersOfEachRole(url: string, cameras: string[] | null = null): Promise<Record<Role, string>> {
    const auth = {} as Record<Role, string>;
    for (const role of ROLES) {
      const name = `${role}-1`;
      const res = await api(`${url}/users`, json('POST', { name, password: `pass of ${role} 1`, role, ...(cameras ? { cameras } : {}) }));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      auth[role] = basic(name, `pass of ${role} 1`);
    }
    return auth;
  }

  it('every route has a rule, and each role gets exactly what its rule allows', async () => {
    svc = await start();
    expect([...svc.service.routes].sort(), 'ACCESS_RULES lists the routes of the app, no more').to.deep.equal(Object.keys(ACCESS_RULES).sort());
    const auth = await usersOfEachRole(svc.url);
    const fill = (p: string) =>
      p
        .replace(':camera', 'gate')
        .replace(':jobId', '00000000-0000-4000-8000-000000000000')
        .replace(':page', '1')
        .replace(':per_page', '1')
        .replace(':referenceId', 'r1')
        .replace(':captureId', 'c1')
        .replace(':token', 'tok')
        .replace(':file', 'f.txt')
        .replace(':name', 'nobody')
        .replace(':id', 'AAAAAAAAAAAA');
    const rank = (r: Role) => ROLES.indexOf(r);
    let checked = 0;
    for (const [route, rule] of Object.entries(ACCESS_RULES)) {
      if (rule === 'open') continue;
      const [method, template] = route.split(' ');
      for (const role of ROLES) {
        const init = method === 'GET' || method === 'DELETE' ? { method } : { ...json(method, {}) };
        const res = await api(`${svc.url}${fill(template)}`, { ...init, auth: auth[role] });
        const allowed = rank(role) >= rank(rule);
        expect(res.status === 403, `${role} ${route}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`).to.equal(!allowed);
        expect(res.status, `${role} ${route}`).to.not.equal(401);
        if (!allowed) expect(res.body.error.code).to.equal('forbidden');
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(100);
    // What the viewer was refused changed nothing: the audit trail has none of its requests.
    const trail = (await api(`${svc.url}/audit?per_page=500`)).body.events as { actor: string; action: string }[];
    expect(trail.filter((e) => e.actor === 'viewer-1' && e.action !== 'sign_in.succeeded')).to.deep.equal([]);
    expect(trail.some((e) => e.actor === 'operator-1' && e.action === 'camera.changed')).to.equal(true);
  });

  it('a user or key limited to some cameras sees only those; the others answer 404 as if they did not exist', async () => {
    const media = testMedia();
    svc = await start();
    for (const camera of ['gate', 'yard']) expect((await api(`${svc.url}/cameras/${camera}`, json('PUT', { sensitivity: 'high' }))).status).to.equal(200);
    const auth = await usersOfEachRole(svc.url, ['gate']);
    const key = (await api(`${svc.url}/keys`, json('POST', { name: 'gate script', role: 'operator', cameras: ['gate'] }))).body.secret as string;
    for (const who of [auth.operator, `Bearer ${key}`, basic('apikey', key)]) {
      const list = await api(`${svc.url}/cameras`, { auth: who });
      expect(list.status).to.equal(200);
      expect(list.body.cameras.map((c: any) => c.camera)).to.deep.equal(['gate']);
      expect((await api(`${svc.url}/cameras/gate`, { auth: who })).status).to.equal(200);
      for (const [method, p] of [['GET', '/cameras/yard'], ['GET', '/cameras/yard/history'], ['DELETE', '/cameras/yard'], ['POST', '/cameras/yard/reset']]) {
        const res = await api(`${svc.url}${p}`, { method, auth: who });
        expect(res.status, `${method} ${p}`).to.equal(404);
        expect(res.body.error.message).to.equal('no camera yard');
      }
      expect((await api(`${svc.url}/cameras/yard`, { ...json('PUT', { sensitivity: 'low' }), auth: who })).status).to.equal(404);
      // nor can it check another camera (or make a new one) with an upload
      for (const camera of ['yard', 'new-one']) {
        const upload = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }, { camera }), auth: who });
        expect(upload.status, camera).to.equal(403);
      }
    }
    // the admin still sees both, unchanged
    const all = await api(`${svc.url}/cameras/yard`);
    expect(all.body.camera.settings.sensitivity).to.equal('high');
  });

  it('2000 wrong passwords from one address: 429 after the limit, hashed only when let through; the right user elsewhere is not locked out', async () => {
    // The defaults: 1/second;5/minute;20/hour per address, 10/minute;100/hour per user name.
    svc = await start({ SIGN_IN_LIMIT_PER_ADDRESS: '', SIGN_IN_LIMIT_PER_USER: '' });
    const hashesBefore = await counter(svc.url, 'vaa_password_hashes_total');
    const statuses: Record<number, number> = {};
    const started = Date.now();
    let retryAfter = 0;
    for (let i = 0; i < 2000; i++) {
      const res = await api(`${svc.url}/kamcheck`, { auth: basic('tester', `guess ${i}`) });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 429) retryAfter = Number(res.headers.get('retry-after'));
    }
    const seconds = (Date.now() - started) / 1000;
    const letThrough = statuses[401] ?? 0;
    expect(Object.keys(statuses).sort()).to.deep.equal(['401', '429']);
    expect(letThrough, `${JSON.stringify(statuses)} in ${seconds.toFixed(1)} s`).to.be.within(1, Math.min(5, Math.ceil(seconds) + 1));
    expect(retryAfter).to.be.within(1, 60);
    // The attacking address is refused even with the right password: no oracle while throttled.
    expect((await api(`${svc.url}/kamcheck`)).status).to.equal(429);
    // A hash for each attempt let through and none for the refused ones (the metrics' own
    // sign-in was checked before the count began and is remembered since).
    const hashesAfter = await counter(svc.url, 'vaa_password_hashes_total');
    expect(hashesAfter - hashesBefore).to.equal(letThrough);
    expect(await counter(svc.url, 'vaa_sign_ins_total{method="basic",outcome="throttled"}')).to.equal(2000 - letThrough + 1);
    // The right user from another address is not locked out.
    expect((await apiFrom('127.0.0.2', `${svc.url}/kamcheck`, AUTH)).status).to.equal(200);
    // Failures are logged with the user name and address, never the password.
    const refused = svc.logs.filter((l) => l.msg === 'sign-in refused');
    expect(refused).to.have.length(letThrough);
    expect(refused[0]).to.include({ user: 'tester', address: '127.0.0.1', method: 'basic' });
    expect(JSON.stringify(svc.logs)).to.not.contain('guess 0');
  });

  it('failures against one user from many addresses lock that name, except from addresses the user signed in from', async () => {
    svc = await start({ SIGN_IN_LIMIT_PER_ADDRESS: '1/second;5/minute;20/hour', SIGN_IN_LIMIT_PER_USER: '10/minute;100/hour', TRUSTED_PROXIES: '127.0.0.1' });
    // Behind a trusted proxy, X-Forwarded-For names the client.
    const via = (client: string, auth: string) => api(`${svc.url}/kamcheck`, { auth, headers: { 'x-forwarded-for': `${client}, 127.0.0.1` } });
    expect((await via('10.0.0.1', AUTH)).status).to.equal(200); // the user's own workstation
    for (let i = 0; i < 10; i++) expect((await via(`10.1.0.${i + 1}`, basic('tester', `guess ${i}`))).status).to.equal(401);
    const fresh = await via('10.2.0.1', AUTH);
    expect(fresh.status).to.equal(429);
    expect((await via('10.0.0.1', AUTH)).status, 'from the address it signed in from').to.equal(200);
    // Another user name is not affected.
    expect((await api(`${svc.url}/users`, { ...json('POST', { name: 'other', password: 'other password', role: 'viewer' }), headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.1' } })).status).to.equal(200);
    expect((await via('10.2.0.1', basic('other', 'other password'))).status).to.equal(200);
    // Without TRUSTED_PROXIES the header is the client's word: ignored.
    const untrusting = await start({ SIGN_IN_LIMIT_PER_ADDRESS: '1/minute', SIGN_IN_LIMIT_PER_USER: 'none' });
    expect((await api(`${untrusting.url}/kamcheck`, { auth: basic('tester', 'wrong'), headers: { 'x-forwarded-for': '10.9.9.9' } })).status).to.equal(401);
    expect((await api(`${untrusting.url}/kamcheck`, { auth: basic('tester', 'wrong'), headers: { 'x-forwarded-for': '10.9.9.8' } })).status).to.equal(429);
    const audit = (await api(`${untrusting.url}/audit`, { headers: { 'x-forwarded-for': '10.9.9.7' }, auth: AUTH })).status;
    expect(audit, 'the peer 127.0.0.1 is throttled, whatever the header says').to.equal(429);
  });

  if (backend.name === 'postgres') {
    it('the nodes of a cluster count the same failures: an address throttled on one is throttled on the other', async () => {
      const shared = { ...(await backend.env()), SIGN_IN_LIMIT_PER_ADDRESS: '3/minute', SIGN_IN_LIMIT_PER_USER: 'none' };
      const [a, b] = [await start(shared), await start(shared)];
      for (const node of [a, a, b]) expect((await api(`${node.url}/kamcheck`, { auth: basic('tester', 'wrong') })).status).to.equal(401);
      for (const node of [a, b]) {
        const res = await api(`${node.url}/kamcheck`, { auth: basic('tester', 'wrong') });
        expect(res.status).to.equal(429);
        expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
      }
    });
  }

  it('a key: Bearer or Basic "apikey", shown once, last use recorded, expiry; revoked on one node, refused on every node', async () => {
    // On PostgreSQL, two nodes of one service.
    const shared = await backend.env();
    svc = await start(shared);
    const other = backend.name === 'postgres' ? await start(shared) : svc;
    const made = await api(`${svc.url}/keys`, json('POST', { name: 'vms', role: 'viewer' }));
    expect(made.status).to.equal(200);
    expect(made.headers.get('cache-control')).to.equal('no-store');
    const key = made.body.secret as string;
    expect(made.body.key).to.include({ name: 'vms', role: 'viewer', created_by: 'tester', last_used_at: null, expires_at: null });
    expect((await api(`${other.url}/kamcheck`, { auth: `Bearer ${key}` })).status).to.equal(200);
    expect((await api(`${other.url}/kamcheck`, { auth: basic('apikey', key) })).status).to.equal(200);
    expect((await api(`${other.url}/kamcheck`, { ...json('POST', {}), auth: `Bearer ${key}` })).status, 'a viewer key uploads nothing').to.equal(403);
    const listed = (await api(`${svc.url}/keys`)).body.keys;
    expect(listed).to.have.length(1);
    expect(JSON.stringify(listed)).to.not.contain(key.slice(17));
    expect(listed[0].last_used_at).to.be.a('string');
    expect((await api(`${svc.url}/keys/${made.body.key.id}`, { method: 'DELETE' })).status).to.equal(200);
    for (const node of [svc, other]) expect((await api(`${node.url}/kamcheck`, { auth: `Bearer ${key}` })).status).to.equal(401);
    // An expired key is refused.
    const soon = new Date(Date.now() + 1500).toISOString();
    const short = (await api(`${svc.url}/keys`, json('POST', { name: 'short', role: 'admin', expires_at: soon }))).body.secret;
    expect((await api(`${svc.url}/kamcheck`, { auth: `Bearer ${short}` })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 1600));
    expect((await api(`${svc.url}/kamcheck`, { auth: `Bearer ${short}` })).status).to.equal(401);
    expect((await api(`${svc.url}/keys`, json('POST', { name: 'past', role: 'admin', expires_at: '2020-01-01T00:00:00Z' }))).status).to.equal(400);
    expect((await api(`${svc.url}/keys`, json('POST', { name: 'bad', role: 'root' }))).body.error.message).to.contain('"role"');
  });

  it('users: a changed password ends sessions on every node; the last admin stays; bad fields are 400s that change nothing', async () => {
    svc = await start();
    expect((await api(`${svc.url}/users`, json('POST', { name: 'op', password: 'operator password', role: 'operator' }))).status).to.equal(200);
    expect((await api(`${svc.url}/users`, json('POST', { name: 'op', password: 'another password', role: 'viewer' }))).status).to.equal(409);
    for (const [body, field] of [
      [{ name: 'x', password: 'short', role: 'viewer' }, '"password"'],
      [{ name: 'apikey', password: 'long enough pass', role: 'viewer' }, '"name"'],
      [{ name: 'a:b', password: 'long enough pass', role: 'viewer' }, '"name"'],
      [{ name: 'x', password: 'long enough pass', role: 'viewer', cameras: ['../x'] }, '"cameras"'],
      [{ name: 'x', password: 'long enough pass', role: 'viewer', admin: true }, '"admin"'],
    ] as const) {
      const res = await api(`${svc.url}/users`, json('POST', body));
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.message).to.contain(field);
    }
    expect((await api(`${svc.url}/users/op`, json('PUT', {}))).status, 'a change of nothing').to.equal(400);
    expect((await api(`${svc.url}/users`)).body.users.map((u: any) => u.name)).to.deep.equal(['op', 'tester']);
    // A console session of "op", then its password changes.
    const signIn = await api(`${svc.url}/session`, { ...json('POST', { user: 'op', password: 'operator password' }), auth: null });
    expect(signIn.body.session).to.include({ user: 'op', role: 'operator', cameras: null });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    expect((await api(`${svc.url}/cameras`, { auth: null, headers: { cookie } })).status).to.equal(200);
    expect((await api(`${svc.url}/users`, { auth: null, headers: { cookie } })).status).to.equal(403);
    expect((await api(`${svc.url}/users/op`, json('PUT', { password: 'a new operator password' }))).status).to.equal(200);
    expect((await api(`${svc.url}/cameras`, { auth: null, headers: { cookie } })).status).to.equal(401);
    expect((await api(`${svc.url}/kamcheck`, { auth: basic('op', 'operator password') })).status).to.equal(401);
    expect((await api(`${svc.url}/kamcheck`, { auth: basic('op', 'a new operator password') })).status).to.equal(200);
    // The last admin of all cameras can be neither removed, demoted nor limited.
    for (const [method, body] of [['DELETE', undefined], ['PUT', { role: 'operator' }], ['PUT', { cameras: ['gate'] }]] as const) {
      const res = await api(`${svc.url}/users/tester`, body ? json(method, body) : { method });
      expect(res.status, `${method} ${JSON.stringify(body)}`).to.equal(409);
    }
    expect((await api(`${svc.url}/users/op`, json('PUT', { role: 'admin' }))).status).to.equal(200);
    expect((await api(`${svc.url}/users/tester`, json('PUT', { role: 'viewer' }))).status).to.equal(200);
    expect((await api(`${svc.url}/users`)).status, 'tester is a viewer now').to.equal(403);
    expect((await api(`${svc.url}/users/nobody`, { method: 'DELETE', auth: basic('op', 'a new operator password') })).status).to.equal(404);
  });

  it('the audit trail of a scripted sequence: who, from where, what, before and after; admins only', async () => {
    svc = await start();
    const admin = 'tester';
    await api(`${svc.url}/session`, { ...json('POST', { user: admin, password: 'wrong password' }), auth: null });
    const signedIn = await api(`${svc.url}/session`, { ...json('POST', { user: admin, password: PASSWORD }), auth: null });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0];
    await api(`${svc.url}/session`, { method: 'DELETE', auth: null, headers: { cookie, 'x-csrf-token': signedIn.body.session.csrf_token } });
    await api(`${svc.url}/users`, json('POST', { name: 'night', password: 'night shift pass', role: 'viewer' }));
    await api(`${svc.url}/users/night`, json('PUT', { role: 'operator', password: 'night shift pass 2' }));
    const key = (await api(`${svc.url}/keys`, json('POST', { name: 'vms', role: 'operator' }))).body;
    await api(`${svc.url}/cameras/gate`, json('PUT', { sensitivity: 'high' }));
    await api(`${svc.url}/cameras/gate`, { ...json('PUT', { sensitivity: 'low', alarm_after: 3 }), auth: `Bearer ${key.secret}` });
    await api(`${svc.url}/keys/${key.key.id}`, { method: 'DELETE' });
    await api(`${svc.url}/users/night`, { method: 'DELETE' });
    const trail = await api(`${svc.url}/audit`);
    expect(trail.status).to.equal(200);
    const events = [...trail.body.events].reverse();
    expect(events.map((e: any) => [e.actor, e.action, e.target])).to.deep.equal([
      [admin, 'sign_in.failed', `user:${admin}`],
      [admin, 'sign_in.succeeded', `user:${admin}`],
      [admin, 'session.ended', `user:${admin}`],
      [admin, 'user.created', 'user:night'],
      [admin, 'user.changed', 'user:night'],
      [admin, 'key.created', `key:${key.key.id}`],
      [admin, 'camera.changed', 'camera:gate'],
      [`key:${key.key.id} (vms)`, 'camera.changed', 'camera:gate'],
      [admin, 'key.revoked', `key:${key.key.id}`],
      [admin, 'user.deleted', 'user:night'],
    ]);
    expect(events.every((e: any) => e.address === '127.0.0.1')).to.equal(true);
    expect(events[1].detail).to.deep.equal({ method: 'console' });
    expect(events[4].detail).to.deep.equal({ before: { role: 'viewer', cameras: null, password: 'old' }, after: { role: 'operator', cameras: null, password: 'new' } });
    expect(events[7].detail.before).to.deep.equal({ sensitivity: 'high', alarm_after: null });
    expect(events[7].detail.after).to.deep.equal({ sensitivity: 'low', alarm_after: 3 });
    expect(JSON.stringify(trail.body)).to.not.contain('night shift pass').and.not.contain('wrong password').and.not.contain(key.secret);
    // filters and pages
    const byKey = await api(`${svc.url}/audit?target=${encodeURIComponent(`key:${key.key.id}`)}`);
    expect(byKey.body.events.map((e: any) => e.action)).to.deep.equal(['key.revoked', 'key.created']);
    const byActor = await api(`${svc.url}/audit?actor=${encodeURIComponent(`key:${key.key.id} (vms)`)}`);
    expect(byActor.body.total).to.equal(1);
    const page2 = await api(`${svc.url}/audit?per_page=4&page=2`);
    expect(page2.body).to.include({ page: 2, per_page: 4, total: 10 });
    expect(page2.body.events.map((e: any) => e.id)).to.deep.equal(trail.body.events.slice(4, 8).map((e: any) => e.id));
    expect((await api(`${svc.url}/audit?per_page=0`)).status).to.equal(400);
  });

  it('an upgrade from the credentials file: its user becomes an admin, hashed; the file goes once the password changes', async () => {
    const dataDir = tempDataDir();
    try {
      fs.writeFileSync(path.join(dataDir, 'credentials'), 'admin:the old shared password\n', { mode: 0o600 });
      const env = { AUTH_CREDENTIALS: '', ...(await backend.env()) };
      svc = await start(env, dataDir);
      const old = basic('admin', 'the old shared password');
      expect((await api(`${svc.url}/kamcheck`, { auth: old })).status).to.equal(200);
      const users = (await api(`${svc.url}/users`, { auth: old })).body.users;
      expect(users.map((u: any) => [u.name, u.role, u.cameras])).to.deep.equal([['admin', 'admin', null]]);
      const stored = (await svc.service.db.sql.get<{ password_hash: string }>('SELECT password_hash FROM users'))!.password_hash;
      expect(stored).to.match(/^scrypt\$32768\$8\$3\$/).and.not.contain('the old shared password');
      expect(fs.existsSync(path.join(dataDir, 'credentials'))).to.equal(true);
      expect((await api(`${svc.url}/users/admin`, { ...json('PUT', { password: 'a password of my own' }), auth: old })).status).to.equal(200);
      expect(fs.existsSync(path.join(dataDir, 'credentials')), 'no plain-text password is left').to.equal(false);
      expect((await api(`${svc.url}/kamcheck`, { auth: old })).status).to.equal(401);
      await svc.stop();
      services.splice(0);
      // A restart keeps the user, and generates nothing.
      svc = await start(env, dataDir);
      expect(svc.service.credentials).to.deep.include({ generated: false, file: null });
      expect((await api(`${svc.url}/kamcheck`, { auth: basic('admin', 'a password of my own') })).status).to.equal(200);
    } finally {
      for (const s of services.splice(0)) await s.stop();
      removeTempDir(dataDir);
    }
  });
});
