// Cameras the appliance checks itself, against a real RTSP server (GStreamer's, testkit/rtsp-
// server.ts) serving H.264 files made from the package footage as looping live streams: a first
// reference learned from the first capture, checks on schedule, a blurred and a covered view
// turning the camera tampered, the server stopped (offline) and started again, wrong
// credentials, a stream that connects and then stalls, and the password never shown.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { sweepCaptureFiles } from '../lib/sources/capture-files.js';
import { classify } from '../lib/sources/stream-capture.js';
import { api, fetchChecked, startTestService, type TestService } from '../testkit/service.js';
import { startRtspServer, type RtspServer } from '../testkit/rtsp-server.js';
import { streamFiles, type StreamName } from '../testkit/stream-fixtures.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';
import { descendants } from './helpers/process-tree.js';
import { until } from './helpers/until.js';

const STREAM_USER = 'viewer';
const STREAM_PASSWORD = 'Tr0ub4dor&3-stream';
/** Short, so that failures and stalls are quick; a capture of 25 frames at 25 fps takes a second. */
const SOURCE_TIMEOUT_S = 3;

describe('camera stream sources', function () {
  this.timeout(120_000);
  let rtsp: RtspServer;
  let svc: TestService;
  let hooks: WebhookReceiver;
  let media: Record<StreamName, string>;

  before(async () => {
    media = await streamFiles();
    rtsp = await startRtspServer({
      mounts: { entrance: media.normal, yard: media.normal, dock: media.normal, stall: media.normal },
      credentials: { user: STREAM_USER, password: STREAM_PASSWORD },
    });
    hooks = await WebhookReceiver.start();
    svc = await startTestService({
      WORKERS: '2',
      SOURCE_TIMEOUT_S: String(SOURCE_TIMEOUT_S),
      OFFLINE_AFTER: '2',
      ALARM_AFTER: '2',
      CLEAR_AFTER: '2',
      KAMCHECK_WAIT_MS: '30000',
      WEBHOOK_URL: hooks.url,
    });
  });

  after(async () => {
    await svc?.stop();
    await hooks?.close();
    await rtsp?.stop();
  });

  const streamUrl = (mount: string, password = STREAM_PASSWORD) => rtsp.url(mount, { credentials: { user: STREAM_USER, password } });
  const camera = async (id: string) => (await api(`${svc.url}/cameras/${id}`)).body.camera;
  const setSource = async (id: string, body: Record<string, unknown>) => {
    const res = await api(`${svc.url}/cameras/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.camera;
  };
  /** A check now (POST /cameras/<camera>/check), its finished task. */
  const checkNow = async (id: string) => {
    const res = await api(`${svc.url}/cameras/${id}/check`, { method: 'POST' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.task.complete, 'finished within KAMCHECK_WAIT_MS').to.equal(true);
    return res.body.task;
  };
  /** The camera's checks once it has at least `n`. */
  const checksOf = (id: string, n: number, ms = 30_000) => until(`${n} checks of ${id}`, async () => ((await camera(id)).checks.length >= n ? (await camera(id)).checks : undefined), ms);

  it('names why a capture failed from what ffmpeg said, whatever the URL holds, and never with its password', () => {
    const url = 'rtsp://admin:p401w404@10.0.0.7:40401/Streaming/404';
    const said = (line: string) => classify(url, `${url}: ${line}\n`, false);
    expect(said('Connection refused').reason).to.equal('connection_refused');
    expect(said('method DESCRIBE failed: 401 Unauthorized').reason).to.equal('authentication_failed');
    expect(said('method DESCRIBE failed: 404 Not Found').reason).to.equal('not_found');
    expect(said('Connection timed out').reason).to.equal('timeout');
    expect(said('Invalid data found when processing input').reason).to.equal('stream_error');
    expect(classify(url, '', true).reason).to.equal('timeout');
    expect(classify(url, 'Stream map \'0:v:0\' matches no streams.\n', false).reason).to.equal('no_video_stream');
    for (const line of ['Connection refused', 'method DESCRIBE failed: 401 Unauthorized']) expect(said(line).message).to.include('admin:***@').and.not.include('p401w404');
  });

  /** Scheduled checks skipped so far because the camera's previous check was unfinished (GET /metrics). */
  const busySkips = async () => Number(/vaa_camera_checks_skipped_total\{reason="busy"\} (\d+)/.exec((await api(`${svc.url}/metrics`)).body as string)![1]);

  it('learns the first reference from the first capture, then checks on schedule, every check a /kamcheck task', async () => {
    const skipsBefore = await busySkips();
    const put = await setSource('entrance', { source_url: streamUrl('entrance'), check_interval_s: 10 });
    expect(put.source).to.include({ check_interval_s: 10, enabled: true, url: `rtsp://${STREAM_USER}:***@127.0.0.1:${rtsp.port}/entrance` });
    expect(put.state).to.equal('ok');

    const [first] = await checksOf('entrance', 1);
    let cam = await camera('entrance');
    expect(first.success).to.equal(true);
    expect(first.probability).to.be.below(50);
    expect(cam.references).to.have.length(1);
    const learned = cam.references[0].references[0];
    expect(learned).to.include({ origin: 'learned', source_job: first.job_id, width: 768, height: 576 });
    expect(cam.reference_image).to.equal(learned.image);
    // The pictures open from their signed links, without the Basic header.
    for (const link of [learned.image, cam.source.picture.image]) {
      const picture = await fetchChecked(link);
      expect(picture.status).to.equal(200);
      expect(picture.headers.get('content-type')).to.equal('image/jpeg');
      expect(picture.body.subarray(0, 2).toString('hex')).to.equal('ffd8');
    }
    expect(cam.source.last_capture).to.include({ outcome: 'ok', reason: null, job_id: first.job_id, image: cam.source.picture.image });
    expect(cam.source.picture).to.include({ width: 768, height: 576 });

    // The task is in the tamper-check history, with its camera, its due time and the learned reference.
    const task = (await api(`${svc.url}/kamcheck/${first.job_id}`)).body.task;
    expect(task).to.include({ camera: 'entrance', success: true });
    expect(task.stream_check.trigger).to.equal('schedule');
    expect(task.reference).to.include({ learned: true, source_job: first.job_id });
    const history = (await api(`${svc.url}/kamcheck/1/20`)).body.tasks.map((t: any) => t.job_id);
    expect(history).to.include(first.job_id);

    // The next check comes one interval after the first was due, on time, against the learned
    // reference; on a box too loaded to finish the first check (capture, learning, analysis)
    // within the interval, the due times it was still running at are skipped as busy, as designed.
    const checks = await checksOf('entrance', 2, 35_000);
    const second = (await api(`${svc.url}/kamcheck/${checks[0].job_id}`)).body.task;
    const skipped = (await busySkips()) - skipsBefore;
    expect(Date.parse(second.stream_check.due_at) - Date.parse(task.stream_check.due_at), `${skipped} due times skipped as busy`).to.equal(10_000 * (1 + skipped));
    expect(second.reference).to.not.have.property('learned');
    expect(second.probability).to.be.below(50);
    for (const c of checks) expect(c.lateness_s, 'started within 3 s of its due time').to.be.within(0, 3);
    cam = await camera('entrance');
    expect(Date.parse(cam.source.next_check_at) - Date.parse(second.stream_check.due_at)).to.equal(10_000);
    expect(cam.references[0].references.map((r: any) => r.origin)).to.include('learned');

    // Each check leaves a picture; the sweep keeps the one the camera names, and removes the rest.
    await setSource('entrance', { enabled: false });
    await until('no check of entrance under way', async () => {
      const tasks = (await api(`${svc.url}/kamcheck/1/100`)).body.tasks.filter((t: any) => t.camera === 'entrance');
      return tasks.every((t: any) => t.complete) || undefined;
    });
    const pictures = () => fs.readdirSync(path.join(svc.dataDir, 'captures'), { recursive: true }).filter((f) => String(f).endsWith('.jpg'));
    expect(pictures().length).to.be.at.least(2);
    const removed = await sweepCaptureFiles(svc.dataDir, svc.service.sources, 0);
    expect(removed).to.be.at.least(1);
    const kept = pictures();
    expect(kept).to.have.length(1);
    cam = await camera('entrance');
    expect(cam.source.next_check_at, 'paused').to.equal(null);
    expect(cam.source.picture.image).to.include(path.basename(String(kept[0]), '.jpg'));
    expect((await fetchChecked(cam.source.picture.image)).status).to.equal(200);
  });

  it('a stream switched to a blurred view turns its camera tampered, back to normal clears it, and a covered view raises it again', async () => {
    await setSource('yard', { source_url: streamUrl('yard'), check_interval_s: 3600 });
    await checksOf('yard', 1); // the first capture, learning the reference
    const sequence: [string, 'ok' | 'tampered', string][] = [
      [media.blurred, 'ok', 'blur'], // one high check: no alarm yet
      [media.blurred, 'tampered', 'blur'],
      [media.normal, 'tampered', ''],
      [media.normal, 'ok', ''],
      [media.covered, 'ok', 'masked'],
      [media.covered, 'tampered', 'masked'],
    ];
    for (const [file, state, cause] of sequence) {
      await rtsp.switchMount('yard', file);
      const task = await checkNow('yard');
      expect(task.success, JSON.stringify(task)).to.equal(true);
      if (cause) {
        expect(task.probability, `${cause}: ${JSON.stringify(task.causes)}`).to.be.at.least(50);
        expect(task.causes[cause], JSON.stringify(task.causes)).to.be.at.least(50);
      } else expect(task.probability, JSON.stringify(task.causes)).to.be.below(50);
      expect((await camera('yard')).state).to.equal(state);
    }
    const changes = (await api(`${svc.url}/cameras/yard/state_changes`)).body.state_changes;
    expect(changes.map((c: any) => `${c.from}>${c.to}`)).to.deep.equal(['ok>tampered', 'tampered>ok', 'ok>tampered']);
    await until('the three state changes delivered', () => hooks.requests.filter((r) => r.headers['x-event-type'] === 'camera.state_changed' && JSON.parse(r.body).camera.camera === 'yard').length === 3 || undefined);

    // A black picture from a stream that still delivers frames is a tamper cause, never offline.
    const black = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'black-stream-')), 'black.mpegts');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=black:s=768x576:r=25:d=4', '-c:v', 'libx264', '-g', '10', '-bf', '0', '-pix_fmt', 'yuv420p', '-f', 'mpegts', black]);
    await rtsp.switchMount('yard', black);
    const dark = await checkNow('yard');
    expect(dark.success).to.equal(true);
    expect(dark.causes.black, JSON.stringify(dark.causes)).to.be.at.least(50);
    expect((await camera('yard')).state).to.equal('tampered');
    fs.rmSync(path.dirname(black), { recursive: true, force: true });
    await rtsp.switchMount('yard', media.covered);
    expect((await checkNow('yard')).causes.masked).to.be.at.least(50);

    // Re-baselining: the covered view, made the reference on purpose, is what checks now compare with.
    const rebased = (await api(`${svc.url}/cameras/yard/reference/from_capture`, { method: 'POST' })).body.camera;
    expect(rebased.references[0].references[0].origin).to.equal('capture');
    const after = await checkNow('yard');
    expect(after.probability, JSON.stringify(after.causes)).to.be.below(50);
  });

  it('a stopped server makes the camera offline after OFFLINE_AFTER failed captures, with the reason; started again, it is back to the state its checks say', async () => {
    await setSource('dock', { source_url: streamUrl('dock'), check_interval_s: 3600 });
    await checksOf('dock', 1);
    await rtsp.stop();
    try {
      const failed = await checkNow('dock');
      expect(failed.success).to.equal(false);
      expect(failed.error.code).to.equal('source_connection_refused');
      expect((await camera('dock')).state, 'one failure: not offline yet').to.equal('ok');
      await checkNow('dock');
      const cam = await camera('dock');
      expect(cam).to.include({ state: 'offline', offline_reason: 'connection_refused' });
      expect(cam.source.last_capture).to.include({ outcome: 'failed', reason: 'connection_refused', image: null });
      expect(cam.source.picture, 'the last good picture stays').to.not.equal(null);
      const metrics = (await api(`${svc.url}/metrics`)).body as string;
      expect(metrics).to.match(/vaa_cameras\{state="offline"\} [1-9]/);
    } finally {
      await rtsp.restart();
    }
    const back = await checkNow('dock');
    expect(back.success).to.equal(true);
    expect((await camera('dock'))).to.include({ state: 'ok', offline_reason: null });
    const changes = (await api(`${svc.url}/cameras/dock/state_changes`)).body.state_changes;
    expect(changes.map((c: any) => [c.from, c.to, c.reason])).to.deep.equal([
      ['offline', 'ok', null],
      ['ok', 'offline', 'connection_refused'],
    ]);
    const events = await until('both changes delivered', () => {
      const mine = hooks.requests.map((r) => JSON.parse(r.body)).filter((b) => b.event === 'camera.state_changed' && b.camera.camera === 'dock');
      return mine.length === 2 ? mine : undefined;
    });
    expect(events.map((e) => [e.previous_state, e.state, e.reason ?? null])).to.deep.equal([
      ['ok', 'offline', 'connection_refused'],
      ['offline', 'ok', null],
    ]);
  });

  it('wrong credentials fail as authentication_failed, and the password is shown nowhere', async () => {
    const wrong = 'not-the-password-42';
    const put = await setSource('gate', { source_url: streamUrl('entrance', wrong), check_interval_s: 3600 });
    expect(put.source.url).to.equal(`rtsp://${STREAM_USER}:***@127.0.0.1:${rtsp.port}/entrance`);
    await checksOf('gate', 1);
    const task = await checkNow('gate');
    expect(task.error.code).to.equal('source_authentication_failed');
    expect((await camera('gate'))).to.include({ state: 'offline', offline_reason: 'authentication_failed' });

    // Every answer, log line and event, for this camera and the others.
    const seen = [
      JSON.stringify((await api(`${svc.url}/cameras`)).body),
      ...(await Promise.all(['entrance', 'yard', 'dock', 'gate'].map(async (c) => JSON.stringify((await api(`${svc.url}/cameras/${c}`)).body)))),
      JSON.stringify((await api(`${svc.url}/kamcheck/1/100`)).body),
      JSON.stringify((await api(`${svc.url}/cameras/gate/state_changes`)).body),
      JSON.stringify(svc.logs),
      ...hooks.requests.map((r) => r.body),
    ].join('\n');
    for (const secret of [STREAM_PASSWORD, wrong, encodeURIComponent(STREAM_PASSWORD)]) expect(seen).to.not.include(secret);
    expect(seen).to.include(':***@');
  });

  it('a stream that connects and then stalls fails as a timeout within the time limit, and leaves no ffmpeg behind', async () => {
    await setSource('stalled', { source_url: streamUrl('stall'), check_interval_s: 3600 });
    await checksOf('stalled', 1);
    await rtsp.stall('stall');
    try {
      const started = Date.now();
      const task = await checkNow('stalled');
      const took = Date.now() - started;
      expect(task.error.code, JSON.stringify(task.error)).to.equal('source_timeout');
      expect(took, 'a frame within SOURCE_TIMEOUT_S, the clip within twice it').to.be.below(2 * SOURCE_TIMEOUT_S * 1000 + 3000);
      const ffmpegs = () => descendants(process.pid).filter((p) => p.name === 'ffmpeg' && p.state !== 'Z');
      await until('no ffmpeg left', () => ffmpegs().length === 0 || undefined, 5000);
    } finally {
      await rtsp.resume('stall');
    }
    expect((await checkNow('stalled')).success).to.equal(true);
  });

  it('refuses a bad source (scheme, length, interval, unknown field) with a 400 naming the field, and changes nothing', async () => {
    const before = (await api(`${svc.url}/cameras`)).body.cameras.length;
    const bad: [Record<string, unknown>, string][] = [
      [{ source_url: 'file:///etc/passwd' }, 'source_url'],
      [{ source_url: 'concat:/etc/passwd|/etc/hosts' }, 'source_url'],
      [{ source_url: `rtsp://cam.example/${'a'.repeat(2048)}` }, 'source_url'],
      [{ source_url: 'rtsp://cam.example/live', check_interval_s: 9 }, 'check_interval_s'],
      [{ source_url: 'rtsp://cam.example/live', check_interval_s: 12.5 }, 'check_interval_s'],
      [{ source_url: 'rtsp://cam.example/live', enabled: 'maybe' }, 'enabled'],
      [{ source_url: 'rtsp://cam.example/live', check_interval: 60 }, 'check_interval'],
      [{ check_interval_s: 60 }, 'source_url'],
    ];
    for (const [body, field] of bad) {
      const res = await api(`${svc.url}/cameras/never-made`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_parameter');
      expect(res.body.error.message).to.include(`"${field}"`);
    }
    expect((await api(`${svc.url}/cameras/never-made`)).status).to.equal(404);
    expect((await api(`${svc.url}/cameras`)).body.cameras).to.have.length(before);

    // Form fields carry the same; a field left out keeps its value; null removes the source.
    const form = new URLSearchParams({ source_url: 'rtsp://cam.example:8554/live', check_interval_s: '60', enabled: 'false' });
    const formed = (await api(`${svc.url}/cameras/formed`, { method: 'PUT', body: form })).body.camera;
    expect(formed.source).to.include({ url: 'rtsp://cam.example:8554/live', check_interval_s: 60, enabled: false, next_check_at: null });
    const resumed = await setSource('formed', { enabled: true });
    expect(resumed.source).to.include({ url: 'rtsp://cam.example:8554/live', check_interval_s: 60, enabled: true });
    expect((await setSource('formed', { source_url: null })).source).to.equal(null);
    const check = await api(`${svc.url}/cameras/formed/check`, { method: 'POST' });
    expect(check.status).to.equal(409);
    expect(check.body.error.code).to.equal('no_source');
  });
});
