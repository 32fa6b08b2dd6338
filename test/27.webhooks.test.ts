// Webhooks over real HTTP, on both job stores: job.completed to WEBHOOK_URL and to a job's
// callback_url, signed, retried with backoff from the outbox in the job store, once per event
// even across a restart or a crash, never following a redirect; bad callback URLs refused at
// upload. Real local receivers (test/helpers/webhook-receiver.ts) answer as each test scripts.
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../lib/config.js';
import { backoffMs, MAX_BACKOFF_MS, nextAttemptAt } from '../lib/webhooks/backoff.js';
import { hostAllowed } from '../lib/webhooks/http/callback-url.js';
import type { Delivery, OutboxStore } from '../lib/webhooks/outbox-store.js';
import { verifySignature } from '../lib/webhooks/sign.js';
import { api, form, removeTempDir, spawnService, startTestService, tempDataDir, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { sleep, until } from './helpers/until.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { WebhookReceiver, type ReceivedRequest } from './helpers/webhook-receiver.js';

/** What a receiver does with a delivery: checks its signature with the secret, by hand. */
function signedBy(secret: string, req: ReceivedRequest): boolean {
  const timestamp = String(req.headers['x-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${req.body}`).digest('hex')}`;
  return req.headers['x-signature'] === expected;
}

/** The secret the service generated into its data folder (owner-only). */
function generatedSecret(dataDir: string): string {
  const file = path.join(dataDir, 'webhook-secret');
  expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
  return fs.readFileSync(file, 'utf8').trim();
}

describe('webhook parts', () => {
  it('backoff doubles from WEBHOOK_BACKOFF_MS up to an hour, with jitter, until the retry window ends', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 5000))).to.deep.equal([5000, 10_000, 20_000, 40_000]);
    expect(backoffMs(20, 5000)).to.equal(MAX_BACKOFF_MS);
    expect(backoffMs(1000, 5000)).to.equal(MAX_BACKOFF_MS);
    const policy = { baseMs: 5000, windowMs: 24 * 3_600_000 };
    expect(nextAttemptAt(policy, 0, 1, 1000, () => 0)).to.equal(1000 + 4000);
    expect(nextAttemptAt(policy, 0, 1, 1000, () => 1)).to.equal(1000 + 6000);
    expect(nextAttemptAt(policy, 0, 3, 1000, () => 0.5)).to.equal(1000 + 20_000);
    // The last attempt is at the end of the window; after it, the delivery is given up.
    expect(nextAttemptAt(policy, 0, 30, policy.windowMs - 10, () => 0.5)).to.equal(policy.windowMs);
    expect(nextAttemptAt(policy, 0, 31, policy.windowMs, () => 0.5)).to.equal(null);
  });

  it('WEBHOOK_ALLOWED_HOSTS: host on any port, host:port on that port, *.domain below it', () => {
    const allowed = ['localhost', 'hooks.example.com:8443', '*.vms.example.org', '[::1]:8080'];
    const ok = (u: string) => hostAllowed(new URL(u), allowed);
    expect(ok('http://localhost:1234/x')).to.equal(true);
    expect(ok('http://LOCALHOST/x')).to.equal(true);
    expect(ok('https://hooks.example.com:8443/')).to.equal(true);
    expect(ok('https://hooks.example.com/')).to.equal(false);
    expect(ok('https://a.vms.example.org/')).to.equal(true);
    expect(ok('https://a.b.vms.example.org:9/')).to.equal(true);
    expect(ok('https://vms.example.org/')).to.equal(false);
    expect(ok('https://evilvms.example.org/')).to.equal(false);
    expect(ok('http://[::1]:8080/')).to.equal(true);
    expect(ok('http://[::1]:8081/')).to.equal(false);
    expect(ok('http://127.0.0.1/')).to.equal(false);
    expect(hostAllowed(new URL('http://a:80/'), ['a:80'])).to.equal(true);
    expect(hostAllowed(new URL('https://a/'), ['a:443'])).to.equal(true);
  });

  it('the configuration names the variable of a bad value', () => {
    const bad = (env: Record<string, string>, variable: string) =>
      expect(() => loadConfig({ DATA_DIR: '/tmp/x', ...env })).to.throw(ConfigError, new RegExp(`^${variable}:`));
    bad({ WEBHOOK_URL: 'ftp://example.com/' }, 'WEBHOOK_URL');
    bad({ WEBHOOK_SECRET: 'short' }, 'WEBHOOK_SECRET');
    bad({ WEBHOOK_ALLOWED_HOSTS: 'a.example.com, http://b/' }, 'WEBHOOK_ALLOWED_HOSTS');
    bad({ WEBHOOK_TIMEOUT_MS: '0' }, 'WEBHOOK_TIMEOUT_MS');
    bad({ WEBHOOK_BACKOFF_MS: 'soon' }, 'WEBHOOK_BACKOFF_MS');
    bad({ WEBHOOK_RETRY_HOURS: '-1' }, 'WEBHOOK_RETRY_HOURS');
    const config = loadConfig({ DATA_DIR: '/tmp/x', WEBHOOK_ALLOWED_HOSTS: ' Hooks.Example.com:8443 ,*.vms.local', WEBHOOK_RETRY_HOURS: '0.5' });
    expect(config.webhookAllowedHosts).to.deep.equal(['hooks.example.com:8443', '*.vms.local']);
    expect(config.webhookRetryMs).to.equal(1_800_000);
    expect(config.webhookTimeoutMs).to.equal(10_000);
    expect(config.webhookBackoffMs).to.equal(5000);
  });

  it('a signature verifies with its secret only, for its timestamp and body only', () => {
    const req = { headers: { 'x-timestamp': '1790000000' }, body: '{"a":1}' } as unknown as ReceivedRequest;
    const sig = `sha256=${createHmac('sha256', 'k'.repeat(32)).update('1790000000.{"a":1}').digest('hex')}`;
    expect(verifySignature('k'.repeat(32), '1790000000', '{"a":1}', sig)).to.equal(true);
    expect(verifySignature('k'.repeat(31) + 'j', '1790000000', '{"a":1}', sig)).to.equal(false);
    expect(verifySignature('k'.repeat(32), '1790000001', '{"a":1}', sig)).to.equal(false);
    expect(verifySignature('k'.repeat(32), '1790000000', '{"a":2}', sig)).to.equal(false);
    expect(signedBy('k'.repeat(32), { ...req, headers: { ...req.headers, 'x-signature': sig } })).to.equal(true);
  });
});

describeBackends('webhooks', function (backend) {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService | undefined;
  const receivers: WebhookReceiver[] = [];
  before(() => {
    media = testMedia();
  });
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
    for (const r of receivers.splice(0)) await r.close();
  });

  const receiver = async (reply?: Parameters<typeof WebhookReceiver.start>[0]) => {
    const r = await WebhookReceiver.start(reply);
    receivers.push(r);
    return r;
  };
  const start = async (env: Record<string, string>, dataDir?: string) => startTestService({ KAMCHECK_WAIT_MS: '0', ...(await backend.env()), ...env }, dataDir);
  const postKamcheck = async (url: string, image = media.reference) => {
    const res = await api(`${url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.task.job_id as string;
  };
  const outbox = (s: TestService) => s.service.db.sql.all<Record<string, unknown>>('SELECT * FROM webhook_outbox ORDER BY seq');

  /**
   * Sends a marker through the service (a tamper check of its own, with `callbackUrl` when given)
   * and waits until each receiver has its job.completed: a receiver gets its events one at a time
   * in the order they were created, so whatever was still to arrive before it has arrived. Resolves
   * with each receiver's requests before its marker; a stray or repeated event is among them.
   */
  async function beforeMarker(url: string, hooks: WebhookReceiver[], callbackUrl?: string): Promise<ReceivedRequest[][]> {
    const res = await api(`${url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }, callbackUrl ? { callback_url: callbackUrl } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const marker = res.body.task.job_id as string;
    const at = (hook: WebhookReceiver) => hook.requests.findIndex((r) => JSON.parse(r.body).task?.job_id === marker);
    await until('the marker event', () => hooks.every((hook) => at(hook) >= 0), 60_000);
    return hooks.map((hook) => hook.requests.slice(0, at(hook)));
  }

  it('job.completed: signed, retried after two 500s and accepted once, events in order of creation, the body GET answers', async () => {
    const hook = await receiver((n) => (n < 2 ? 500 : 200));
    svc = await start({ WEBHOOK_URL: hook.url, WEBHOOK_BACKOFF_MS: '200' });
    const first = await postKamcheck(svc.url);
    const second = await postKamcheck(svc.url);
    const tasks = [await waitComplete(`${svc.url}/kamcheck/${first}`), await waitComplete(`${svc.url}/kamcheck/${second}`)];
    const [before] = await beforeMarker(svc.url, [hook]);
    expect(before).to.have.length(4);

    // The first event three times (500, 500, 200), then the second: one event in flight per receiver.
    const [e1, e2] = [hook.eventIds[0], hook.eventIds[3]];
    expect(hook.eventIds.slice(0, 4)).to.deep.equal([e1, e1, e1, e2]);
    expect(e1).to.match(/^[0-9a-f-]{36}$/);
    expect(e2).to.not.equal(e1);
    const secret = generatedSecret(svc.dataDir);
    for (const req of before) {
      expect(req.method).to.equal('POST');
      expect(req.path).to.equal('/hook');
      expect(req.headers['content-type']).to.equal('application/json');
      expect(req.headers['x-event-type']).to.equal('job.completed');
      expect(req.headers['user-agent']).to.match(/^[\w.-]+\/\d+\.\d+\.\d+/);
      expect(Math.abs(Number(req.headers['x-timestamp']) - Date.now() / 1000)).to.be.below(60);
      expect(signedBy(secret, req), 'signature').to.equal(true);
      expect(signedBy(secret, { ...req, body: req.body.replace('success', 'succes') })).to.equal(false);
    }
    expect(signedBy('not the secret at all', hook.requests[0])).to.equal(false);
    // Each body is exactly the envelope GET answers for the finished job.
    expect(JSON.parse(hook.requests[0].body)).to.deep.equal((await api(`${svc.url}/kamcheck/${first}`)).body);
    expect(JSON.parse(hook.requests[3].body)).to.deep.equal({ status: 'success', task: tasks[1] });
    expect(tasks[0].success).to.equal(true);
    // Backoff: 200 ms, then 400 ms (each +-20 %).
    expect(hook.requests[1].at - hook.requests[0].at).to.be.at.least(150);
    expect(hook.requests[2].at - hook.requests[1].at).to.be.at.least(300);

    const rows = (await outbox(svc)).slice(0, 2);
    expect(rows.map((r) => [r.event_id, r.attempts, r.delivered_at !== null, r.last_status, r.gave_up_at])).to.deep.equal([
      [e1, 3, true, 200, null],
      [e2, 1, true, 200, null],
    ]);
    // The job's end wakes the dispatcher (the poll alone would take up to a second); created_at is the job's finish.
    expect(hook.requests[0].at - (rows[0].created_at as number)).to.be.below(700);
  });

  it('a restart of the service between the failed attempts loses nothing: delivered once', async () => {
    const hook = await receiver((n) => (n < 2 ? 500 : 200));
    const dataDir = tempDataDir();
    try {
      // The restarted service is the same node on the same store; 2 s between attempts leave room for the stop.
      const env = { ...(await backend.env()), NODE_ID: 'webhook-node', WEBHOOK_URL: hook.url, WEBHOOK_BACKOFF_MS: '2000', KAMCHECK_WAIT_MS: '0' };
      svc = await startTestService(env, dataDir);
      const id = await postKamcheck(svc.url);
      await until('the first attempt', () => hook.requests.length === 1, 30_000);
      await svc.stop();
      svc = undefined;
      expect(hook.requests).to.have.length(1);

      svc = await startTestService(env, dataDir);
      const [before] = await beforeMarker(svc.url, [hook]);
      expect(before).to.have.length(3);
      expect(new Set(before.map((r) => r.headers['x-event-id'])).size).to.equal(1);
      const secret = generatedSecret(dataDir);
      for (const req of before) expect(signedBy(secret, req)).to.equal(true);
      expect(JSON.parse(hook.requests[2].body)).to.deep.equal((await api(`${svc.url}/kamcheck/${id}`)).body);
    } finally {
      await svc?.stop();
      svc = undefined;
      removeTempDir(dataDir);
    }
  });

  it('a crash during a delivery repeats that delivery once, with the same event id', async () => {
    // The first request is never answered: the service is killed while it waits.
    const hook = await receiver((n) => (n === 0 ? 'hang' : 200));
    const dataDir = tempDataDir();
    const env = {
      ...(await backend.env()),
      DATA_DIR: dataDir,
      NODE_ID: 'crashing-node',
      WORKERS: '1',
      AUTH_CREDENTIALS: 'tester:correct horse battery staple',
      WEBHOOK_URL: hook.url,
      WEBHOOK_SECRET: 'a shared secret of the receiver',
    };
    let child = await spawnService(env);
    try {
      const id = await postKamcheck(child.url);
      await until('the first attempt', () => hook.requests.length === 1, 60_000);
      child.child.kill('SIGKILL');
      await child.exited;
      child = await spawnService(env);
      // Its lease is released at start: sent again at once rather than after the lease.
      await until('the second attempt', () => hook.requests.length === 2, 15_000);
      const [before] = await beforeMarker(child.url, [hook]);
      expect(before).to.have.length(2);
      expect(hook.eventIds[1]).to.equal(hook.eventIds[0]);
      expect(signedBy('a shared secret of the receiver', hook.requests[1])).to.equal(true);
      expect(hook.requests[1].body).to.equal(hook.requests[0].body);
      expect(JSON.parse(hook.requests[1].body)).to.deep.equal((await api(`${child.url}/kamcheck/${id}`)).body);
      expect(fs.existsSync(path.join(dataDir, 'webhook-secret'))).to.equal(false);
    } finally {
      child.child.kill('SIGTERM');
      await child.exited;
      removeTempDir(dataDir);
    }
  });

  it('callback_url receives its job\'s events, WEBHOOK_URL every event; one event id for both', async () => {
    const all = await receiver();
    const mine = await receiver();
    svc = await start({ WEBHOOK_URL: all.url, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WORKERS: '2' });
    const callback = `${mine.url}?token=abc`;
    const res = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: media.jpeg }, { callback_url: callback }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const faceLog = res.body.task.job_id;
    const kamcheck = await postKamcheck(svc.url);
    await waitComplete(`${svc.url}/face_log/${faceLog}`, 120_000);
    await waitComplete(`${svc.url}/kamcheck/${kamcheck}`);
    await until('the deliveries', () => all.requests.length === 2 && mine.requests.length === 1);
    const [allBefore, mineBefore] = await beforeMarker(svc.url, [all, mine], callback);
    expect(mineBefore).to.have.length(1);
    expect(allBefore).to.have.length(2);
    expect(mine.requests[0].path).to.equal('/hook?token=abc');
    const bodies = allBefore.map((r) => JSON.parse(r.body));
    const faceLogAtAll = allBefore[bodies.findIndex((b) => b.task.job_id === faceLog)];
    expect(bodies.map((b) => b.task.job_id).sort()).to.deep.equal([faceLog, kamcheck].sort());
    expect(faceLogAtAll.headers['x-event-id']).to.equal(mine.requests[0].headers['x-event-id']);
    expect(faceLogAtAll.body).to.equal(mine.requests[0].body);
    // The face log's body is GET's, signed result links included.
    const get = (await api(`${svc.url}/face_log/${faceLog}`)).body;
    expect(get.task.success).to.equal(true);
    expect(JSON.parse(mine.requests[0].body)).to.deep.equal(get);
    expect(signedBy(generatedSecret(svc.dataDir), mine.requests[0])).to.equal(true);
  });

  it('a bad callback_url is a 400 invalid_parameter and creates no job', async () => {
    svc = await start({ WEBHOOK_ALLOWED_HOSTS: 'localhost,*.example.com:8443' });
    const cases = [
      'ftp://localhost/hook',
      'not a url',
      '/relative/hook',
      'http://user:secret@localhost/hook',
      'http://127.0.0.1/hook', // not on WEBHOOK_ALLOWED_HOSTS
      'https://a.example.com/hook', // port 443, not 8443
      'https://example.com:8443/hook', // *.example.com is below it only
      `http://localhost/${'x'.repeat(2048)}`,
    ];
    for (const callback of cases) {
      const res = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: media.jpeg }, { callback_url: callback }) });
      expect(res.status, callback).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_parameter');
      expect(res.body.error.message).to.contain('callback_url');
    }
    const twice = new FormData();
    twice.append('video', new Blob([fs.readFileSync(media.jpeg)]), 'still.jpg');
    twice.append('callback_url', 'http://localhost/a');
    twice.append('callback_url', 'http://localhost/b');
    expect((await api(`${svc.url}/face_log`, { method: 'POST', body: twice })).status).to.equal(400);
    expect((await api(`${svc.url}/face_detect`)).body.tasks).to.deep.equal([]);
    expect(fs.readdirSync(path.join(svc.dataDir, 'jobs'))).to.deep.equal([]);
    expect(await outbox(svc)).to.deep.equal([]);
  });

  it('a redirect is not followed: that attempt failed, and the event is sent again to the same URL', async () => {
    const elsewhere = await receiver();
    const hook = await receiver((n) => (n === 0 ? { status: 302, headers: { location: elsewhere.url } } : 200));
    svc = await start({ WEBHOOK_URL: hook.url, WEBHOOK_BACKOFF_MS: '100' });
    await postKamcheck(svc.url);
    await until('the second attempt', () => hook.requests.length === 2, 30_000);
    const [before] = await beforeMarker(svc.url, [hook]);
    expect(before).to.have.length(2);
    expect(elsewhere.requests).to.have.length(0);
    expect(hook.eventIds[1]).to.equal(hook.eventIds[0]);
  });

  it('a receiver that does not answer within WEBHOOK_TIMEOUT_MS gets the event again', async () => {
    const hook = await receiver((n) => (n === 0 ? 'hang' : 200));
    svc = await start({ WEBHOOK_URL: hook.url, WEBHOOK_BACKOFF_MS: '100', WEBHOOK_TIMEOUT_MS: '500' });
    await postKamcheck(svc.url);
    await until('the second attempt', () => hook.requests.length === 2, 30_000);
    const [before] = await beforeMarker(svc.url, [hook]);
    expect(before).to.have.length(2);
    expect(hook.eventIds[1]).to.equal(hook.eventIds[0]);
    expect(hook.requests[1].at - hook.requests[0].at).to.be.at.least(500);
    const [row] = await outbox(svc);
    expect(row.attempts).to.equal(2);
    expect(row.delivered_at).to.not.equal(null);
  });

  it('a failed job sends job.completed too, with success false and its error', async () => {
    const hook = await receiver();
    svc = await start({ WEBHOOK_URL: hook.url });
    // A PNG whose header is intact but whose pixel data is cut off fails in the worker.
    const cut = path.join(svc.dataDir, 'cut.png');
    fs.writeFileSync(cut, fs.readFileSync(media.reference).subarray(0, 2000));
    const id = await postKamcheck(svc.url, cut);
    const task = await waitComplete(`${svc.url}/kamcheck/${id}`);
    expect(task.success).to.equal(false);
    await until('the delivery', () => hook.requests.length === 1);
    const body = JSON.parse(hook.requests[0].body);
    expect(body).to.deep.equal({ status: 'success', task });
    expect(body.task.error.code).to.equal('decode_failed');
  });

  describe('the outbox claims', () => {
    let dir: string;
    let opened: TestStores[] = [];
    beforeEach(() => {
      dir = tempDataDir();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      removeTempDir(dir);
    });

    const enqueue = (stores: TestStores, url: string, n: number) =>
      stores.db.transaction((tx) => stores.outbox.enqueue(tx, { webhookUrl: url }, { type: 'job.completed', body: { n } }, Date.now()));
    const bodies = (ds: Delivery[]) => ds.map((d) => JSON.parse(d.body).n as number);

    it('one delivery per receiver at a time, the oldest first; a failed one holds back the later ones until it is due', async () => {
      const stores = await backend.openStores(dir);
      opened.push(stores);
      const store = stores.outbox;
      for (let n = 0; n < 3; n++) await enqueue(stores, 'http://a.test/', n);
      await enqueue(stores, 'http://b.test/', 10);
      const first = await store.claim('node-1', 60_000, 10);
      expect(bodies(first)).to.deep.equal([0, 10]);
      expect(first.map((d) => d.attempt)).to.deep.equal([1, 1]);
      // Held: nothing more to claim, by this node or another.
      expect(await store.claim('node-2', 60_000, 10)).to.deep.equal([]);
      await store.markDelivered(first[1], 200);
      expect(await store.markFailed(first[0], { status: 500, error: 'HTTP 500', nextAttemptAt: Date.now() + 300 })).to.equal(true);
      // a's oldest is not due yet, and the later ones wait behind it.
      expect(await store.claim('node-2', 60_000, 10)).to.deep.equal([]);
      await sleep(350); // past its due time
      const again = await store.claim('node-2', 60_000, 10);
      expect(bodies(again)).to.deep.equal([0]);
      expect(again[0].attempt).to.equal(2);
      // A late write of the first attempt changes nothing: the row is the second attempt's.
      expect(await store.markFailed(first[0], { status: 500, error: 'late', nextAttemptAt: Date.now() })).to.equal(false);
      await store.markDelivered(again[0], 204);
      expect(bodies(await store.claim('node-1', 60_000, 10))).to.deep.equal([1]);
    });

    if (backend.name === 'postgres') {
      it('two nodes claiming at once never get the same delivery', async () => {
        const nodes = await backend.openNodes(dir, 2);
        opened.push(...nodes);
        for (let r = 0; r < 30; r++) for (let n = 0; n < 2; n++) await enqueue(nodes[0], `http://r${r}.test/`, r * 10 + n);
        const claimAll = async (store: OutboxStore, owner: string) => {
          const got: Delivery[] = [];
          for (;;) {
            const batch = await store.claim(owner, 60_000, 3);
            if (batch.length === 0) return got;
            got.push(...batch);
          }
        };
        const [a, b] = await Promise.all([claimAll(nodes[0].outbox, 'node-a'), claimAll(nodes[1].outbox, 'node-b')]);
        const seqs = [...a, ...b].map((d) => d.seq);
        expect(new Set(seqs).size).to.equal(seqs.length);
        // Each receiver's oldest, once: its second waits until the first is delivered.
        expect(bodies([...a, ...b]).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 30 }, (_, r) => r * 10));
      });
    }
  });
});
