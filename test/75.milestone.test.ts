// Cameras' changes of state as Milestone XProtect analytics events, received by a real HTTP
// listener that checks each document as Milestone's schema describes it (helpers/analytics-event-
// check.ts): element names and order, GUIDs, dates, the base64 JPEG of the check's frame. From
// an uploaded clip and from a camera's own stream (the capture's picture, byte for byte), a
// refusing server tried again with its answers in the log and /metrics, and on PostgreSQL with
// two nodes each event once.
import { expect } from 'chai';
import { api, form, PASSWORD, removeTempDir, spawnService, startTestService, tempDataDir, USER, type ServiceProcess, type TestService, fetchChecked } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { startRtspServer, type RtspServer } from '../testkit/rtsp-server.js';
import { streamFiles, type StreamName } from '../testkit/stream-fixtures.js';
import { checkAnalyticsEvent, type Parsed } from './helpers/analytics-event-check.js';
import { describeBackends, newDatabaseUrl } from './helpers/backends.js';
import { until } from './helpers/until.js';
import { WebhookReceiver, type Reply } from './helpers/webhook-receiver.js';

const GATE_ID = '1f3bd6a1-4b8e-4bd0-9f56-5d1c6d2b1a10';

/** The width and height a JPEG's frame header gives. */
function jpegSize(jpeg: Buffer): { width: number; height: number } {
  expect(jpeg.subarray(0, 2).toString('hex'), 'a JPEG starts with SOI').to.equal('ffd8');
  for (let i = 2; i + 9 < jpeg.length; ) {
    if (jpeg[i] !== 0xff) throw new Error(`no marker at ${i}`);
    const marker = jpeg[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return { height: jpeg.readUInt16BE(i + 5), width: jpeg.readUInt16BE(i + 7) };
    i += 2 + jpeg.readUInt16BE(i + 2);
  }
  throw new Error('no frame header');
}

/** The analytics events XProtect's event server got: each checked, with its request. */
function received(server: WebhookReceiver): { doc: Parsed; header: Parsed; path: string; contentType: string | undefined }[] {
  return server.requests.map((r) => {
    const doc = checkAnalyticsEvent(r.body);
    return { doc, header: doc.EventHeader as Parsed, path: r.path, contentType: r.headers['content-type'] };
  });
}

const putJson = (url: string, body: unknown) => api(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describeBackends('Milestone XProtect analytics events', function (backend) {
  this.timeout(120_000);
  let media: TestMedia;
  let xprotect: WebhookReceiver;
  let svc: TestService;
  /** How XProtect answers the n-th request (0 the first). */
  let reply: (n: number) => Reply = () => 200;

  before(() => {
    media = testMedia();
  });
  beforeEach(async () => {
    reply = () => 200;
    xprotect = await WebhookReceiver.start((n) => reply(n));
    const eventUrl = xprotect.url.replace(/\/hook$/, '/');
    svc = await startTestService({ ...(await backend.env()), KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '1', CLEAR_AFTER: '1', MILESTONE_EVENT_URL: eventUrl, WEBHOOK_BACKOFF_MS: '200' });
  });
  afterEach(async () => {
    await svc.stop();
    await xprotect.close();
  });

  const check = async (camera: string, video: string) => {
    const res = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video }, { camera }) });
    expect(res.body.task?.success, JSON.stringify(res.body)).to.equal(true);
    return res.body.task;
  };

  it('takes a camera\'s `milestone` setting, shows it with its default messages, and refuses a bad one by name', async () => {
    await api(`${svc.url}/cameras/gate/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    const set = await putJson(`${svc.url}/cameras/gate`, { milestone: { source_name: '192.168.0.199', source_object_id: GATE_ID.toUpperCase(), messages: { tampered: 'Tamper alarm' } } });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.camera.settings.milestone).to.deep.equal({
      source_name: '192.168.0.199',
      source_object_id: GATE_ID,
      messages: { tampered: 'Tamper alarm', offline: 'Camera offline', ok: 'Camera OK' },
    });
    const bad: [unknown, RegExp][] = [
      [{ source_object_id: GATE_ID }, /needs "source_name"/],
      [{ source_name: 'cam', source_object_id: 'not-a-guid' }, /"source_object_id" must be .* GUID/],
      [{ source_name: 'cam', messages: { alarm: 'x' } }, /"messages" has unknown field\(s\) "alarm"/],
      [{ source_name: 'cam', colour: 'red' }, /"milestone" has unknown field\(s\) "colour"/],
      [{ source_name: 'x'.repeat(300) }, /"source_name" must be text of at most 256/],
      ['[1, 2]', /"milestone" must be an object/],
    ];
    for (const [milestone, message] of bad) {
      const res = await putJson(`${svc.url}/cameras/gate`, { milestone, sensitivity: 'high' });
      expect(res.status, JSON.stringify(milestone)).to.equal(400);
      expect(res.body.error.message).to.match(message);
    }
    // nothing of a refused request applied; null sends no more events to XProtect
    const now = (await api(`${svc.url}/cameras/gate`)).body.camera;
    expect(now.settings).to.include({ sensitivity: 'medium' });
    expect(now.settings.milestone.source_name).to.equal('192.168.0.199');
    expect((await putJson(`${svc.url}/cameras/gate`, { milestone: null })).body.camera.settings.milestone).to.equal(null);
    // the history has each change, by the API's names
    const history = (await api(`${svc.url}/cameras/gate/history`)).body.history as Record<string, any>[];
    const changes = history.filter((h) => h.kind === 'settings' && h.milestone).map((h) => [h.milestone.from?.source_name ?? null, h.milestone.to?.source_name ?? null]);
    expect(changes).to.deep.equal([['192.168.0.199', null], [null, '192.168.0.199']]);
  });

  it('sends an uploaded clip\'s changes of state as schema-valid analytics events with its last frame; cameras without the setting send none', async () => {
    for (const id of ['gate', 'yard']) await api(`${svc.url}/cameras/${id}/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    await putJson(`${svc.url}/cameras/gate`, { milestone: { source_name: '192.168.0.199', source_object_id: GATE_ID, messages: { tampered: 'Tamper alarm' } } });
    const before = Date.now();
    const tampered = await check('gate', media.clipCovered);
    await check('yard', media.clipCovered); // yard has no milestone setting
    const cleared = await check('gate', media.clip);
    await until('two analytics events', () => xprotect.requests.length >= 2, 20_000);
    await new Promise((r) => setTimeout(r, 500)); // yard's would have come by now
    const events = received(xprotect);
    expect(events).to.have.length(2);
    for (const e of events) {
      expect(e.path).to.equal('/');
      expect(e.contentType).to.match(/^text\/xml/);
      const source = e.header.Source as Parsed;
      expect(source.Name).to.equal('192.168.0.199');
      expect(source.FQID).to.deep.equal({ ObjectId: GATE_ID, FolderType: '0', Kind: '5135BA21-F1DC-4321-806A-6CE2017343C0' });
      expect(Date.parse(e.header.Timestamp as string)).to.be.within(before - 1000, Date.now());
    }
    expect(new Set(events.map((e) => e.header.ID)).size).to.equal(2);

    const [alarm, ok] = events;
    expect(alarm.header.Message).to.equal('Tamper alarm');
    expect(alarm.doc.Description).to.equal(`Camera "gate" tampered (probability ${tampered.probability}%): view masked or covered (${Math.round(tampered.causes.masked)}).`);
    // (the task's finish_time is an HTTP date: whole seconds)
    expect(Math.floor(Date.parse(alarm.doc.StartTime as string) / 1000) * 1000).to.equal(Date.parse(tampered.finish_time));
    const snapshot = (alarm.doc.SnapshotList as Parsed).Snapshot as Parsed;
    const jpeg = Buffer.from(snapshot.Image as string, 'base64');
    expect(Number(snapshot.SizeInBytes)).to.equal(jpeg.length);
    expect(jpegSize(jpeg)).to.deep.equal({ width: Number(snapshot.Width), height: Number(snapshot.Height) });
    expect(snapshot).to.include({ TimeOffset: '0', Width: '320', Height: '240', HasOverlay: 'false' });
    const custom = JSON.parse(((alarm.doc.Vendor as Parsed).CustomData as string));
    expect(custom).to.include({ camera: 'gate', state: 'tampered', previous_state: 'ok', job_id: tampered.job_id, probability: tampered.probability });

    expect(ok.header.Message).to.equal('Camera OK');
    expect(ok.doc.Description).to.equal(`Camera "gate" OK (probability ${cleared.probability}%): no tampering seen any more.`);
    expect(((ok.doc.SnapshotList as Parsed).Snapshot as Parsed).Width).to.equal('320');
  });

  it('keeps an event while XProtect refuses it, shown in /healthz and /metrics, and sends it when XProtect takes it', async () => {
    let accept = false;
    reply = () => (accept ? 200 : 503);
    await api(`${svc.url}/cameras/yard/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    await putJson(`${svc.url}/cameras/yard`, { milestone: { source_name: 'Yard' } });
    expect((await api(`${svc.url}/healthz`)).body.health.milestone).to.deep.equal({ pending: 0 });
    await check('yard', media.clipCovered);
    await until('refused twice', () => xprotect.requests.length >= 2, 20_000);
    const health = await api(`${svc.url}/healthz`);
    expect(health.status, 'XProtect away does not make the appliance unhealthy').to.equal(200);
    expect(health.body.health.milestone).to.deep.equal({ pending: 1 });
    expect((await api(`${svc.url}/metrics`)).body).to.include('vaa_milestone_pending 1');
    accept = true;
    await until('taken', async () => (await api(`${svc.url}/healthz`)).body.health.milestone.pending === 0, 40_000);
    expect(new Set(received(xprotect).map((e) => e.header.ID)).size, 'the same event each time').to.equal(1);
    expect((await api(`${svc.url}/metrics`)).body).to.include('vaa_milestone_pending 0');
  });

  it('tries a refusing server again; what it answered is in the log and /metrics', async () => {
    reply = (n) => [500, 503][n] ?? 200;
    await api(`${svc.url}/cameras/dock/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    await putJson(`${svc.url}/cameras/dock`, { milestone: { source_name: 'Dock camera' } });
    await check('dock', media.clipCovered);
    await until('delivered on the third attempt', () => xprotect.requests.length >= 3, 20_000);
    const ids = received(xprotect).map((e) => e.header.ID);
    expect(new Set(ids).size, 'the same event each time').to.equal(1);
    const doc = received(xprotect)[0];
    expect(doc.header.Source).to.deep.equal({ Name: 'Dock camera' }); // no object id: no FQID
    expect(doc.header.Message).to.equal('Camera tampered');
    const metrics = await until('counted', async () => {
      const text = (await api(`${svc.url}/metrics`)).body as string;
      return text.includes('vaa_milestone_answers_total{status="200"} 1') ? text : undefined;
    }, 10_000);
    expect(metrics).to.include('vaa_milestone_answers_total{status="500"} 1').and.include('vaa_milestone_answers_total{status="503"} 1');
    expect(metrics).to.include('vaa_event_output_deliveries_total{output="milestone",outcome="failed"} 2');
    expect(metrics).to.include('vaa_event_output_deliveries_total{output="milestone",outcome="delivered"} 1');
    const answers = svc.logs.filter((l) => l.msg === 'XProtect answered an analytics event');
    expect(answers.map((l) => [l.status, l.answer])).to.deep.equal([[500, 'answer 500'], [503, 'answer 503'], [200, 'answer 200']]);
  });
});

describe('Milestone XProtect analytics events of a camera\'s stream', function () {
  this.timeout(120_000);
  let rtsp: RtspServer;
  let xprotect: WebhookReceiver;
  let svc: TestService;
  let streams: Record<StreamName, string>;

  before(async () => {
    streams = await streamFiles();
    rtsp = await startRtspServer({ mounts: { lobby: streams.normal } });
    xprotect = await WebhookReceiver.start();
    svc = await startTestService({ KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '1', CLEAR_AFTER: '1', OFFLINE_AFTER: '1', SOURCE_TIMEOUT_S: '3', MILESTONE_EVENT_URL: xprotect.url });
  });
  after(async () => {
    await svc?.stop();
    await xprotect?.close();
    await rtsp?.stop();
  });

  const checkNow = async () => {
    const res = await api(`${svc.url}/cameras/lobby/check`, { method: 'POST' });
    expect(res.body.task?.complete, JSON.stringify(res.body)).to.equal(true);
    return res.body.task;
  };

  it('sends the capture\'s own picture with an alarm, and an offline stream without one', async () => {
    const set = await putJson(`${svc.url}/cameras/lobby`, { source_url: rtsp.url('lobby'), check_interval_s: 3600, milestone: { source_name: 'Lobby' } });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    await checkNow(); // learns its first reference: no change of state
    await rtsp.switchMount('lobby', streams.covered);
    const alarm = await checkNow();
    await until('the alarm', () => xprotect.requests.length >= 1, 20_000);
    const camera = (await api(`${svc.url}/cameras/lobby`)).body.camera;
    expect(camera.state).to.equal('tampered');
    const picture = (await fetchChecked(camera.source.picture.image)).body;
    const [event] = received(xprotect);
    expect(event.doc.Description).to.match(/^Camera "lobby" tampered \(probability \d+%\): view masked or covered/);
    const snapshot = (event.doc.SnapshotList as Parsed).Snapshot as Parsed;
    expect(Buffer.from(snapshot.Image as string, 'base64').equals(picture), 'the capture\'s picture').to.equal(true);
    expect(snapshot).to.include({ Width: String(camera.source.picture.width), Height: String(camera.source.picture.height) });
    expect(JSON.parse((event.doc.Vendor as Parsed).CustomData as string)).to.include({ job_id: alarm.job_id });

    await rtsp.stop();
    await checkNow();
    await until('offline', () => xprotect.requests.length >= 2, 20_000);
    const offline = received(xprotect)[1];
    expect(offline.header.Message).to.equal('Camera offline');
    expect(offline.doc.Description).to.equal('Camera "lobby" offline: connection refused.');
    expect(offline.doc).to.not.have.property('SnapshotList');
    expect(xprotect.requests[0].path).to.equal('/hook'); // the event URL as given
  });
});

describe('Milestone XProtect analytics events of two nodes', function () {
  this.timeout(180_000);
  const procs: ServiceProcess[] = [];
  let xprotect: WebhookReceiver;
  let dataDir: string;

  after(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    await xprotect?.close();
    if (dataDir) removeTempDir(dataDir);
  });

  it('two nodes on PostgreSQL send each event once', async () => {
    const media = testMedia();
    xprotect = await WebhookReceiver.start();
    dataDir = tempDataDir();
    const databaseUrl = await newDatabaseUrl();
    const env = { DATA_DIR: dataDir, AUTH_CREDENTIALS: `${USER}:${PASSWORD}`, WORKERS: '1', KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '1', CLEAR_AFTER: '1', DATABASE_URL: databaseUrl, MILESTONE_EVENT_URL: xprotect.url };
    for (const id of ['node-a', 'node-b']) procs.push(await spawnService({ ...env, NODE_ID: id }));
    const [a, b] = procs.map((p) => p.url);
    await api(`${a}/cameras/north/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    await putJson(`${b}/cameras/north`, { milestone: { source_name: 'North' } });
    const jobs: string[] = [];
    for (const [url, clip] of [[a, media.clipCovered], [b, media.clip], [b, media.clipCovered], [a, media.clip]] as const) {
      const res = await api(`${url}/kamcheck`, { method: 'POST', body: form({ video: clip }, { camera: 'north' }) });
      jobs.push(res.body.task.job_id);
    }
    await until('four events', () => xprotect.requests.length >= 4, 30_000);
    await new Promise((r) => setTimeout(r, 2000)); // a second sender would show by now
    const events = received(xprotect);
    expect(events).to.have.length(4);
    expect(new Set(events.map((e) => e.header.ID)).size).to.equal(4);
    expect(events.map((e) => e.header.Message)).to.deep.equal(['Camera tampered', 'Camera OK', 'Camera tampered', 'Camera OK']);
    expect(events.map((e) => JSON.parse((e.doc.Vendor as Parsed).CustomData as string).job_id)).to.deep.equal(jobs);
  });
});

describe('the analytics event check of the test listener', () => {
  const good = (header: string, rest = '') =>
    `<?xml version="1.0" encoding="utf-8"?><AnalyticsEvent xmlns="urn:milestone-systems"><EventHeader>${header}</EventHeader>${rest}</AnalyticsEvent>`;
  const header = `<ID>${GATE_ID}</ID><Timestamp>2026-11-28T09:00:00.000Z</Timestamp><Message>Camera tampered</Message>`;

  it('passes a minimal document and refuses each kind of mistake the schema rules out', () => {
    expect(checkAnalyticsEvent(good(header, '<Description>d</Description><StartTime>2026-11-28T09:00:00Z</StartTime>'))).to.deep.include({ Description: 'd' });
    const wrong: [string, RegExp][] = [
      [good(header, '<StartTime>2026-11-28T09:00:00Z</StartTime><Description>d</Description>'), /Description comes after StartTime/],
      [good(`<ID>${GATE_ID}</ID><Timestamp>2026-11-28T09:00:00Z</Timestamp>`), /lacks Message/],
      [good(header.replace(GATE_ID, 'gate')), /ID is not a valid guid/],
      [good(header.replace('2026-11-28T09:00:00.000Z', 'Sat, 28 Nov 2026 09:00:00 GMT')), /Timestamp is not a valid dateTime/],
      [good(header, '<SnapshotList><Snapshot><TimeOffset>0</TimeOffset><Image>not base64!</Image></Snapshot></SnapshotList>'), /Image is not a valid base64/],
      [good(header, '<SnapshotList><Snapshot><Width>1</Width></Snapshot></SnapshotList>'), /Snapshot lacks TimeOffset/],
      [good(header + '<Source><FQID><ObjectId>' + GATE_ID + '</ObjectId></FQID></Source>'), /FQID lacks FolderType/],
      [good(header, '<Description>a</Description><Description>b</Description>'), /Description appears twice/],
      [good(header, '<Camera>gate</Camera>'), /Camera is not an element of AnalyticsEvent/],
      [good(header).replace('xmlns="urn:milestone-systems"', ''), /not \{urn:milestone-systems\}AnalyticsEvent/],
    ];
    for (const [xml, message] of wrong) expect(() => checkAnalyticsEvent(xml), xml).to.throw(message);
  });
});
