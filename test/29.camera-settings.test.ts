// Settings per camera over real HTTP on real clips: each setting alone, shown with its defaults,
// bad values refused by name with nothing changed, every change in the camera's history; and what
// each does to real checks: an ignored screen, a mask over the rest, alarm_after, an arming
// schedule that holds an alarm back until it arms, dark_is_tamper; the operator's acknowledgement
// and reset, with their events.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api, AUTH, fetchChecked, form, PASSWORD, removeTempDir, spawnService, startTestService, tempDataDir, USER, type ServiceProcess, type TestService } from '../testkit/service.js';
import { SCREEN_AREA, testMedia, type TestMedia } from '../testkit/media.js';
import { isArmed } from '../lib/cameras/armed.js';
import { describeBackends, newDatabaseUrl } from './helpers/backends.js';
import { until } from './helpers/until.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

/** A JPEG's width and height, from its start-of-frame marker. */
function jpegSize(bytes: Buffer): { width: number; height: number } {
  for (let i = 2; i < bytes.length - 9; ) {
    const marker = bytes[i + 1];
    const length = bytes.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xc3) return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    i += 2 + length;
  }
  throw new Error('no start-of-frame marker');
}

describe('arming schedules', () => {
  // Monday 30 November 2026, 12:00 UTC (13:00 in Berlin)
  const monNoon = Date.UTC(2026, 10, 30, 12, 0);
  const at = (dayOffset: number, hh: number, mm = 0) => monNoon + dayOffset * 86_400_000 + ((hh - 12) * 60 + mm) * 60_000;

  it('no range is always armed; a range arms its days from its start to its end, in its time zone', () => {
    expect(isArmed([], 'UTC', monNoon)).to.equal(true);
    const office = [{ days: ['mon' as const, 'tue' as const], from: '08:00', to: '18:00' }];
    expect(isArmed(office, 'UTC', at(0, 12))).to.equal(true);
    expect(isArmed(office, 'UTC', at(0, 7, 59))).to.equal(false);
    expect(isArmed(office, 'UTC', at(0, 18))).to.equal(false); // the end is not in it
    expect(isArmed(office, 'UTC', at(2, 12))).to.equal(false); // Wednesday
    // 17:30 UTC is 18:30 in Berlin: past the range there
    expect(isArmed(office, 'UTC', at(0, 17, 30))).to.equal(true);
    expect(isArmed(office, 'Europe/Berlin', at(0, 17, 30))).to.equal(false);
  });

  it('a range that ends before it starts runs past midnight into the next day; from = to is a whole day', () => {
    const nights = [{ days: ['fri' as const], from: '22:00', to: '06:00' }];
    expect(isArmed(nights, 'UTC', at(4, 23))).to.equal(true); // Friday night
    expect(isArmed(nights, 'UTC', at(5, 5, 59))).to.equal(true); // Saturday morning
    expect(isArmed(nights, 'UTC', at(5, 6))).to.equal(false);
    expect(isArmed(nights, 'UTC', at(3, 23))).to.equal(false); // Thursday night
    expect(isArmed(nights, 'UTC', at(4, 5))).to.equal(false); // Friday morning: Thursday is not listed
    const allSunday = [{ days: ['sun' as const], from: '00:00', to: '00:00' }];
    expect(isArmed(allSunday, 'UTC', at(6, 0))).to.equal(true);
    expect(isArmed(allSunday, 'UTC', at(6, 23, 59))).to.equal(true);
    expect(isArmed(allSunday, 'UTC', at(7, 0))).to.equal(false);
  });
});

describeBackends('camera settings', function (backend) {
  let media: TestMedia;
  let svc: TestService;
  let receiver: WebhookReceiver;

  before(() => {
    media = testMedia();
  });
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    svc = await startTestService({ ...(await backend.env()), KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '2', CLEAR_AFTER: '2', WEBHOOK_URL: receiver.url });
  });
  afterEach(async () => {
    await svc.stop();
    await receiver.close();
  });

  const putReference = (camera: string, image: string) => api(`${svc.url}/cameras/${camera}/reference`, { method: 'PUT', body: form({ image }) });
  const put = (camera: string, body: unknown) =>
    api(`${svc.url}/cameras/${camera}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const post = (path: string, body?: unknown) =>
    api(`${svc.url}${path}`, body === undefined ? { method: 'POST' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const camera = async (id: string) => {
    const res = await api(`${svc.url}/cameras/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.camera;
  };
  const check = async (cameraId: string, video: string) => {
    const res = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video }, { camera: cameraId }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.task.success, JSON.stringify(res.body.task)).to.equal(true);
    return res.body.task;
  };
  const events = (type: string) => receiver.requests.filter((r) => r.headers['x-event-type'] === type).map((r) => JSON.parse(r.body));

  it('each setting alone, shown with its defaults; null puts one back; a bad value is a 400 naming it and changes nothing; changes join the history', async () => {
    expect((await putReference('lobby', media.referenceNear)).status).to.equal(200);
    const defaults = {
      sensitivity: 'medium',
      alarm_after: 2,
      clear_after: 2,
      ignore_areas: [],
      armed: [],
      time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      dark_is_tamper: true,
      milestone: null,
    };
    expect((await camera('lobby')).settings).to.deep.equal(defaults);
    const line = async () => (await api(`${svc.url}/cameras`)).body.cameras.find((c: { camera: string }) => c.camera === 'lobby').tampered_at;
    expect(await line(), 'the list shows the line of its sensitivity').to.equal(50);

    const office = [{ days: ['mon', 'tue'], from: '08:00', to: '18:00' }];
    const steps: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ sensitivity: 'high' }, { sensitivity: 'high' }],
      [{ alarm_after: 4 }, { alarm_after: 4 }],
      [{ clear_after: 3 }, { clear_after: 3 }],
      [{ ignore_areas: [SCREEN_AREA] }, { ignore_areas: [SCREEN_AREA] }],
      [{ armed: office, time_zone: 'Asia/Tokyo' }, { armed: office, time_zone: 'Asia/Tokyo' }],
      [{ dark_is_tamper: false }, { dark_is_tamper: false }],
    ];
    let expected: Record<string, unknown> = { ...defaults };
    for (const [body, change] of steps) {
      const res = await put('lobby', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expected = { ...expected, ...change };
      expect(res.body.camera.settings, JSON.stringify(body)).to.deep.equal(expected);
    }
    expect(await line()).to.equal(35);

    const bad: [string, unknown][] = [
      ['sensitivity', 'extreme'],
      ['alarm_after', 0],
      ['alarm_after', 2.5],
      ['clear_after', 'soon'],
      ['ignore_areas', [[[0, 0], [1, 0]]]],
      ['ignore_areas', [[[0, 0], [1.2, 0], [1, 1]]]],
      ['ignore_areas', [[[0, 0], [1, 0], [1, 1], [0, 1]]]], // the whole picture
      ['ignore_areas', 'not json'],
      ['armed', [{ days: ['mon'], from: '25:00', to: '18:00' }]],
      ['armed', [{ days: ['funday'], from: '08:00', to: '18:00' }]],
      ['armed', [{ days: ['mon'], from: '08:00', to: '18:00', every: 'week' }]],
      ['time_zone', 'Mars/Olympus_Mons'],
      ['dark_is_tamper', 'maybe'],
    ];
    for (const [field, value] of bad) {
      // sent with a good value of another setting: nothing of the request is applied
      const res = await put('lobby', { sensitivity: 'low', [field]: value });
      expect(res.status, `${field}: ${JSON.stringify(value)}`).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_parameter');
      expect(res.body.error.message, JSON.stringify(res.body)).to.include(`"${field}"`);
    }
    expect((await camera('lobby')).settings).to.deep.equal(expected);

    // A form carries the lists as JSON text; an empty field puts a setting back to its default.
    const formBody = new URLSearchParams({ ignore_areas: JSON.stringify([[[0, 0], [0.3, 0], [0.3, 0.4], [0, 0.4]]]), sensitivity: '' });
    const viaForm = await api(`${svc.url}/cameras/lobby`, { method: 'PUT', body: formBody });
    expect(viaForm.status, JSON.stringify(viaForm.body)).to.equal(200);
    expect(viaForm.body.camera.settings).to.include({ sensitivity: 'medium' });
    expect(viaForm.body.camera.settings.ignore_areas).to.deep.equal([[[0, 0], [0.3, 0], [0.3, 0.4], [0, 0.4]]]);
    const back = await put('lobby', { alarm_after: null, clear_after: null, armed: null, time_zone: null, ignore_areas: [], dark_is_tamper: null });
    expect(back.body.camera.settings).to.deep.equal(defaults);

    const history = (await api(`${svc.url}/cameras/lobby/history`)).body.history;
    expect(history).to.have.length(steps.length + 2);
    expect(history.every((h: any) => h.kind === 'settings' && h.by === 'tester')).to.equal(true);
    expect(history[history.length - 1]).to.deep.include({ sensitivity: { from: 'medium', to: 'high' } });
    expect(history[history.length - 2]).to.deep.include({ alarm_after: { from: null, to: 4 } });
    expect(history[0]).to.deep.include({ alarm_after: { from: 4, to: null }, dark_is_tamper: { from: false, to: true } });
    expect((await camera('lobby')).history).to.deep.equal(history.slice(0, 10));
    // a PUT that changes nothing adds nothing
    await put('lobby', { sensitivity: 'medium' });
    expect((await api(`${svc.url}/cameras/lobby/history`)).body.history).to.have.length(history.length);
  });

  it('a moving screen inside an ignored area counts for nothing; a mask over the rest of the picture still alarms', async () => {
    await putReference('lobby', media.referenceScreen);
    await put('lobby', { alarm_after: 1, clear_after: 1 });
    // without the area, the screen's moving picture is an alarm
    const unignored = await check('lobby', media.clipScreen);
    expect(unignored.probability, JSON.stringify(unignored)).to.be.at.least(50);
    expect((await camera('lobby')).state).to.equal('tampered');
    await post('/cameras/lobby/reset');

    await put('lobby', { ignore_areas: [SCREEN_AREA] });
    for (let i = 0; i < 2; i++) {
      const ignored = await check('lobby', media.clipScreen);
      expect(ignored.probability, JSON.stringify(ignored)).to.be.below(50);
      expect((await camera('lobby')).state).to.equal('ok');
    }
    const covered = await check('lobby', media.clipScreenCovered);
    expect(covered.probability, JSON.stringify(covered)).to.be.at.least(50);
    expect(covered.causes.masked).to.be.at.least(50);
    expect((await camera('lobby')).state).to.equal('tampered');
  });

  it('alarm_after: 4 needs four tampered checks where the appliance needs two; clear_after: 1 clears on one', async () => {
    await putReference('gate', media.referenceNear);
    await put('gate', { alarm_after: 4, clear_after: 1 });
    for (let i = 1; i <= 4; i++) {
      const task = await check('gate', media.clipCovered);
      expect(task.probability).to.be.at.least(50);
      const cam = await camera('gate');
      expect(cam.state, `after ${i} tampered checks`).to.equal(i < 4 ? 'ok' : 'tampered');
      expect(cam.alarm_streak).to.equal(i < 4 ? i : 0);
    }
    await check('gate', media.clip);
    expect((await camera('gate')).state).to.equal('ok');
  });

  it('an alarm while disarmed sends no event and is announced once when the camera is armed', async () => {
    await putReference('yard', media.referenceNear);
    const hour = new Date().getUTCHours();
    const hh = (h: number) => `${String(h % 24).padStart(2, '0')}:00`;
    // armed from two hours from now for an hour, every day: disarmed now
    const later = [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: hh(hour + 2), to: hh(hour + 3) }];
    const set = await put('yard', { alarm_after: 1, clear_after: 1, armed: later, time_zone: 'UTC' });
    expect(set.body.camera.armed_now).to.equal(false);
    const alarm = await check('yard', media.clipCovered);
    const held = await camera('yard');
    expect(held).to.include({ state: 'tampered', alarm_held: true });
    await until('the check announced', () => events('job.completed').some((e) => e.task.job_id === alarm.job_id), 20_000);
    expect(events('camera.state_changed')).to.deep.equal([]);
    // the duty leaves it while the camera is disarmed
    await svc.service.duties.run('cameras.held-alarms');
    expect((await camera('yard')).alarm_held).to.equal(true);

    const armed = await put('yard', { armed: [] });
    expect(armed.body.camera.armed_now).to.equal(true);
    await svc.service.duties.run('cameras.held-alarms');
    await until('the held alarm announced', () => events('camera.state_changed').length === 1, 20_000);
    const [announced] = events('camera.state_changed');
    expect(announced).to.include({ previous_state: 'ok', state: 'tampered', reason: 'armed', changed_at: held.state_since, job_id: alarm.job_id });
    expect(announced.announced_at).to.be.a('string');
    expect((await camera('yard')).alarm_held).to.equal(false);
    await svc.service.duties.run('cameras.held-alarms');
    const clear = await check('yard', media.clip);
    await until('the end of the alarm announced', () => events('camera.state_changed').length === 2, 20_000);
    expect(events('camera.state_changed')[1]).to.include({ previous_state: 'tampered', state: 'ok', job_id: clear.job_id });
  });

  it('a picture too dark to judge alarms with dark_is_tamper (the default) and not without it', async () => {
    await putReference('tunnel', media.referenceNear);
    await putReference('garage', media.referenceNear);
    await put('tunnel', { alarm_after: 1 });
    await put('garage', { alarm_after: 1, dark_is_tamper: false });
    const counted = await check('tunnel', media.clipDark);
    expect(counted).to.include({ too_dark: true });
    expect(counted.probability).to.be.at.least(50);
    expect(counted.not_counted).to.deep.equal([]);
    expect((await camera('tunnel')).state).to.equal('tampered');
    const dark = await check('garage', media.clipDark);
    expect(dark).to.include({ too_dark: true, probability: 0 });
    expect(dark.causes.black).to.be.at.least(50); // measured, not counted
    expect(dark.not_counted).to.include.members(['black', 'exposure', 'masked']);
    expect((await camera('garage')).state).to.equal('ok');
    // a picture that can be judged is judged whatever the setting says
    const masked = await check('garage', media.clipCovered);
    expect(masked).to.include({ too_dark: false });
    expect(masked.probability).to.be.at.least(50);
    expect((await camera('garage')).state).to.equal('tampered');
  });

  it('an alarm is acknowledged with who, when and a comment, and an event; a new alarm needs a new one; a reset puts the camera back to ok', async () => {
    await putReference('dock', media.referenceNear);
    await put('dock', { alarm_after: 1, clear_after: 1 });
    const early = await post('/cameras/dock/acknowledge');
    expect(early.status).to.equal(409);
    expect(early.body.error.code).to.equal('not_in_alarm');
    expect((await post('/cameras/nowhere/acknowledge')).status).to.equal(404);

    await check('dock', media.clipCovered);
    const acked = await post('/cameras/dock/acknowledge', { comment: 'technician on the way' });
    expect(acked.status, JSON.stringify(acked.body)).to.equal(200);
    expect(acked.body.camera.state).to.equal('tampered');
    expect(acked.body.camera.acknowledgement).to.include({ acknowledged_by: 'tester', comment: 'technician on the way' });
    const listed = (await api(`${svc.url}/cameras`)).body.cameras.find((c: any) => c.camera === 'dock');
    expect(listed.acknowledgement).to.deep.equal(acked.body.camera.acknowledgement);
    await until('the acknowledgement announced', () => events('camera.acknowledged').length === 1, 20_000);
    expect(events('camera.acknowledged')[0]).to.deep.include({ acknowledged_by: 'tester', comment: 'technician on the way' });
    expect(events('camera.acknowledged')[0].camera.acknowledgement).to.deep.equal(acked.body.camera.acknowledgement);
    expect((await post('/cameras/dock/acknowledge', { comment: 'x', extra: 1 })).status).to.equal(400);

    // cleared and raised again: the new alarm is not acknowledged
    await check('dock', media.clip);
    await check('dock', media.clipCovered);
    const again = await camera('dock');
    expect(again).to.include({ state: 'tampered', acknowledgement: null });

    const reset = await post('/cameras/dock/reset', { comment: 'lens cleaned' });
    expect(reset.status, JSON.stringify(reset.body)).to.equal(200);
    expect(reset.body.camera).to.include({ state: 'ok', alarm_streak: 0, acknowledgement: null });
    await until('the reset announced', () => events('camera.state_changed').some((e) => e.reason === 'reset'), 20_000);
    expect(events('camera.state_changed').find((e) => e.reason === 'reset')).to.include({ previous_state: 'tampered', state: 'ok', job_id: null });
    const history = (await api(`${svc.url}/cameras/dock/history`)).body.history;
    expect(history.map((h: any) => h.kind)).to.deep.equal(['reset', 'acknowledged', 'settings']);
    expect(history[0]).to.include({ by: 'tester', comment: 'lens cleaned', previous_state: 'tampered' });
    const changes = (await api(`${svc.url}/cameras/dock/state_changes`)).body.state_changes;
    expect(changes[0]).to.include({ from: 'tampered', to: 'ok', reason: 'reset', job_id: null });
  });

  it('the list pages, filters, searches and puts unacknowledged alarms first; an unchanged page is a 304; cards get small signed thumbnails', async () => {
    for (const id of ['a-ok', 'b-acked', 'c-alarm', 'd-ok', 'e-ok']) await putReference(id, id === 'd-ok' ? media.referenceLarge : media.referenceNear);
    for (const id of ['b-acked', 'c-alarm']) {
      await put(id, { alarm_after: 1 });
      await check(id, media.clipCovered);
    }
    await post('/cameras/b-acked/acknowledge');
    await put('b-acked', { source_url: 'rtsp://127.0.0.1:1/b', enabled: false }); // paused: never read
    const list = (query: string, headers: Record<string, string> = {}) => api(`${svc.url}/cameras${query}`, { headers });
    const first = await list('?order=attention&per_page=2');
    expect(first.body.cameras.map((c: any) => c.camera)).to.deep.equal(['c-alarm', 'b-acked']);
    expect(first.body).to.deep.include({ total: 5, counts: { ok: 3, tampered: 2, offline: 0, unacknowledged: 1 } });
    expect((await list('?order=attention&per_page=2&page=3')).body.cameras.map((c: any) => c.camera)).to.deep.equal(['e-ok']);
    expect((await list('?state=unacknowledged')).body.cameras.map((c: any) => c.camera)).to.deep.equal(['c-alarm']);
    expect((await list('?state=ok&q=D-')).body).to.deep.include({ total: 1 });
    const everyCamera = (await list('')).body.cameras;
    expect(everyCamera.map((c: any) => c.camera)).to.deep.equal(['a-ok', 'b-acked', 'c-alarm', 'd-ok', 'e-ok']);
    // a page reads its own cameras' references and sources: each card is the camera as the whole list has it
    expect(everyCamera.find((e: any) => e.camera === 'b-acked').source).to.include({ enabled: false });
    for (const query of ['?order=attention&per_page=2', '?order=attention&per_page=2&page=2', '?q=d-ok&per_page=1']) {
      for (const c of (await list(query)).body.cameras) expect(c, `${query} ${c.camera}`).to.deep.equal(everyCamera.find((e: any) => e.camera === c.camera));
    }
    for (const bad of ['?state=broken', '?per_page=0', '?per_page=201', '?page=x', '?order=name']) {
      const res = await list(bad);
      expect(res.status, bad).to.equal(400);
    }

    // a poll of the unchanged page moves no body; a change on it does
    const etag = first.headers.get('etag')!;
    expect(etag).to.match(/^"[\w-]+"$/);
    const same = await fetch(`${svc.url}/cameras?order=attention&per_page=2`, { headers: { authorization: AUTH, 'if-none-match': etag } });
    expect(same.status).to.equal(304);
    expect((await same.arrayBuffer()).byteLength).to.equal(0);
    await check('c-alarm', media.clipCovered);
    const changed = await list('?order=attention&per_page=2', { 'if-none-match': etag });
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).to.not.equal(etag);

    // the thumbnail of a 640x480 reference: 320 px wide, a fraction of the bytes, signed like the picture
    const d = (await list('?q=d-ok')).body.cameras[0];
    const full = await fetchChecked(d.reference_image);
    const thumb = await fetchChecked(d.reference_thumbnail);
    expect(thumb.status).to.equal(200);
    expect(thumb.headers.get('content-type')).to.equal('image/jpeg');
    expect(jpegSize(thumb.body)).to.deep.equal({ width: 320, height: 240 });
    expect(thumb.body.length).to.be.below(full.body.length / 4);
    expect((await fetchChecked(d.reference_thumbnail.replace(/sig=([0-9a-f])/, (_: string, c: string) => `sig=${c === '0' ? '1' : '0'}`))).status).to.equal(401);
    const again = await fetchChecked(d.reference_thumbnail);
    expect(again.body.equals(thumb.body)).to.equal(true);

    // pictures without thumbnails (of a release before them) get theirs from the duty, not on a first view
    const thumbnails = path.join(svc.dataDir, 'thumbnails');
    fs.rmSync(thumbnails, { recursive: true, force: true });
    await svc.service.duties.run('cameras.thumbnails');
    const made = fs.readdirSync(thumbnails, { recursive: true }).filter((f) => String(f).endsWith('.jpg'));
    expect(made).to.have.length(5);
  });
});

describe('camera settings across nodes', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let dataDir: string;
  const procs: ServiceProcess[] = [];

  before(async () => {
    media = testMedia();
    dataDir = tempDataDir();
    const env = { DATABASE_URL: await newDatabaseUrl(), DATA_DIR: dataDir, AUTH_CREDENTIALS: `${USER}:${PASSWORD}`, WORKERS: '1', KAMCHECK_WAIT_MS: '30000' };
    for (const id of ['node-a', 'node-b']) procs.push(await spawnService({ ...env, NODE_ID: id }));
  });
  after(async () => {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    if (dataDir) removeTempDir(dataDir);
  });

  it('settings set on one node apply to the next check on another', async () => {
    const [a, b] = procs.map((p) => p.url);
    expect((await api(`${a}/cameras/lobby/reference`, { method: 'PUT', body: form({ image: media.referenceScreen }) })).status).to.equal(200);
    const set = await api(`${a}/cameras/lobby`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ alarm_after: 1, ignore_areas: [SCREEN_AREA] }),
    });
    expect(set.status).to.equal(200);
    expect((await api(`${b}/cameras/lobby`)).body.camera.settings).to.deep.include({ alarm_after: 1, ignore_areas: [SCREEN_AREA] });
    const ignored = await api(`${b}/kamcheck`, { method: 'POST', body: form({ video: media.clipScreen }, { camera: 'lobby' }) });
    expect(ignored.body.task.probability, JSON.stringify(ignored.body)).to.be.below(50);
    const covered = await api(`${b}/kamcheck`, { method: 'POST', body: form({ video: media.clipScreenCovered }, { camera: 'lobby' }) });
    expect(covered.body.task.probability).to.be.at.least(50);
    // one tampered check is the alarm: node b counted with node a's alarm_after
    expect((await api(`${a}/cameras/lobby`)).body.camera.state).to.equal('tampered');
  });
});
