// Camera monitoring over real HTTP on real clips: references per time-of-day slot (round
// midnight, in the appliance's TZ), the refresh on a check that returns 0, the alarm state's
// hysteresis, and the /cameras resources.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { api, fetchChecked, form, startTestService, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { sweepReferenceFiles } from '../lib/cameras/reference-files.js';
import { cameraFinishHook } from '../lib/cameras/check-outcome.js';
import { verifySignature } from '../lib/webhooks/sign.js';
import { until } from './helpers/until.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';
import { addLitRenewal } from '../testkit/lit-renewal.js';
import { slotOf } from '../lib/cameras/time-of-day.js';

/** UTC+1 in November: every captured_at below is given in UTC, and the slots are Berlin's. */
const TZ = 'Europe/Berlin';

function referenceFiles(dataDir: string): string[] {
  const root = path.join(dataDir, 'references');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).flatMap((shard) => fs.readdirSync(path.join(root, shard)).map((f) => path.join(root, shard, f)));
}

describeBackends('cameras', function (backend) {
  let media: TestMedia;
  let svc: TestService;
  let savedTz: string | undefined;

  before(() => {
    media = testMedia();
    savedTz = process.env.TZ;
    process.env.TZ = TZ;
  });
  after(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });
  beforeEach(async () => {
    svc = await startTestService({ ...(await backend.env()), KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '2', CLEAR_AFTER: '2' });
  });
  afterEach(async () => {
    await svc.stop();
  });

  const putReference = (camera: string, image: string, capturedAt?: string) =>
    api(`${svc.url}/cameras/${camera}/reference`, { method: 'PUT', body: form({ image }, capturedAt ? { captured_at: capturedAt } : {}) });
  const check = (fields: Record<string, string>, files: Record<string, string> = { video: media.clip }) =>
    api(`${svc.url}/kamcheck`, { method: 'POST', body: form(files, fields) });
  const camera = async (id: string) => {
    const res = await api(`${svc.url}/cameras/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.camera;
  };
  const finished = (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.task.complete, JSON.stringify(res.body.task)).to.equal(true);
    expect(res.body.task.success, JSON.stringify(res.body.task)).to.equal(true);
    return res.body.task;
  };

  it('PUT sets a reference for its slot, the slot keeps its last 3, the picture opens from a signed link, DELETE forgets the camera', async () => {
    const first = await putReference('gate-1', media.referenceNear, '2026-11-24T22:40:00Z');
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const cam = first.body.camera;
    expect(cam).to.include({ camera: 'gate-1', state: 'ok', reference_count: 1, alarm_streak: 0, last_check: null });
    expect(cam.checks).to.deep.equal([]);
    expect(cam.references).to.have.length(1);
    expect(cam.references[0].slot).to.equal('23:00-24:00'); // 23:40 in Berlin
    const ref = cam.references[0].references[0];
    expect(ref).to.include({ slot: '23:00-24:00', captured_at: 'Tue, 24 Nov 2026 22:40:00 GMT', source_job: null, width: 320, height: 240 });

    // The signed link opens without credentials and serves the picture sent; a forged one does not.
    const picture = await fetchChecked(ref.image);
    expect(picture.status).to.equal(200);
    expect(picture.headers.get('content-type')).to.equal('image/jpeg');
    expect(picture.body.equals(fs.readFileSync(media.referenceNear))).to.equal(true);
    const forged = ref.image.replace(/sig=([0-9a-f])/, (_: string, c: string) => `sig=${c === '0' ? '1' : '0'}`);
    expect((await fetchChecked(forged)).status).to.equal(401);

    for (const minute of ['05', '15', '25', '35']) {
      expect((await putReference('gate-1', media.reference, `2026-11-24T22:${minute}:00Z`)).status).to.equal(200);
    }
    const kept = await camera('gate-1');
    expect(kept.reference_count).to.equal(3);
    expect(kept.references[0].references.map((r: any) => r.captured_at)).to.deep.equal([
      'Tue, 24 Nov 2026 22:35:00 GMT',
      'Tue, 24 Nov 2026 22:25:00 GMT',
      'Tue, 24 Nov 2026 22:15:00 GMT',
    ]);
    // The dropped pictures go with the sweep once no queued check can still be reading them.
    expect(referenceFiles(svc.dataDir)).to.have.length(5);
    expect(await sweepReferenceFiles(svc.dataDir, svc.service.cameras)).to.equal(0);
    expect(await sweepReferenceFiles(svc.dataDir, svc.service.cameras, Date.now() + 2 * 3600_000)).to.equal(2);
    expect(referenceFiles(svc.dataDir)).to.have.length(3);

    expect((await api(`${svc.url}/cameras`)).body.cameras.map((c: any) => c.camera)).to.deep.equal(['gate-1']);
    const deleted = await api(`${svc.url}/cameras/gate-1`, { method: 'DELETE' });
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ status: 'success', camera: { camera: 'gate-1', deleted: true } });
    expect((await api(`${svc.url}/cameras/gate-1`)).status).to.equal(404);
    expect((await api(`${svc.url}/cameras/gate-1`, { method: 'DELETE' })).status).to.equal(404);
    expect((await api(`${svc.url}/cameras`)).body.cameras).to.deep.equal([]);
    expect((await check({ camera: 'gate-1' })).body.error.code).to.equal('no_reference');
  });

  it('a check without an image uses the reference nearest in time of day, round midnight; with an image the image becomes the reference', async () => {
    const none = await check({ camera: 'yard-2' });
    expect(none.status).to.equal(422);
    expect(none.body.error.code).to.equal('no_reference');

    await putReference('yard-2', media.referenceNear, '2026-11-24T22:40:00Z'); // 23:40 in Berlin
    await putReference('yard-2', media.reference, '2026-11-24T11:00:00Z'); // 12:00

    // 00:10 in Berlin: 30 minutes from 23:40 across midnight, 11 h 50 from 12:00.
    const night = finished(await check({ camera: 'yard-2', captured_at: '2026-11-24T23:10:00Z' }));
    expect(night.camera).to.equal('yard-2');
    expect(night.captured_at).to.equal('Tue, 24 Nov 2026 23:10:00 GMT');
    expect(night.reference).to.deep.equal({ slot: '23:00-24:00', captured_at: 'Tue, 24 Nov 2026 22:40:00 GMT', source_job: null });
    // An ISO time without an offset is the appliance's local time: 11:30 in Berlin, nearest 12:00.
    const day = finished(await check({ camera: 'yard-2', captured_at: '2026-11-25T11:30:00' }));
    expect(day.captured_at).to.equal('Wed, 25 Nov 2026 10:30:00 GMT');
    expect(day.reference).to.deep.equal({ slot: '12:00-13:00', captured_at: 'Tue, 24 Nov 2026 11:00:00 GMT', source_job: null });
    // The two references give different results on the same clip: the choice is real.
    expect(night.probability).to.equal(0);
    expect(day.probability).to.be.above(0).and.below(50);
    // The task reads back the same.
    expect((await api(`${svc.url}/kamcheck/${day.job_id}`)).body.task).to.deep.equal(day);

    // With an image, the image is the reference and becomes the camera's for its slot (an HTTP-date here).
    const sent = finished(await check({ camera: 'yard-2', captured_at: 'Wed, 25 Nov 2026 05:20:00 GMT' }, { video: media.clip, image: media.referenceNear }));
    expect(sent.reference).to.deep.equal({ slot: '06:00-07:00', captured_at: 'Wed, 25 Nov 2026 05:20:00 GMT', source_job: sent.job_id });
    const cam = await camera('yard-2');
    // 00:00-01:00 is the night check's renewal (it scored 0), 11:00-12:00 the day check's: its slot
    // had no reference, and it scored under 10 (FIRST_OF_SLOT_BELOW).
    expect(day.probability).to.be.below(10);
    expect(cam.references.map((s: any) => s.slot)).to.deep.equal(['00:00-01:00', '06:00-07:00', '11:00-12:00', '12:00-13:00', '23:00-24:00']);
    expect(cam.references.find((s: any) => s.slot === '06:00-07:00').references[0].source_job).to.equal(sent.job_id);

    // A clip of another size than every reference of the camera; bad fields.
    const hd = await check({ camera: 'yard-2' }, { video: media.clipHd });
    expect(hd.status).to.equal(422);
    expect(hd.body.error.code).to.equal('resolution_mismatch');
    for (const fields of <Record<string, string>[]>[{ camera: '..' }, { camera: 'a/b' }, { camera: 'x'.repeat(129) }, { camera: 'yard-2', captured_at: 'yesterday' }, { camera: 'yard-2', captured_at: '2026-11-25' }]) {
      const bad = await check(fields);
      expect(bad.status, JSON.stringify(fields)).to.equal(400);
      expect(bad.body.error.code).to.equal('invalid_parameter');
    }
    expect((await api(`${svc.url}/cameras/a%2Fb`)).status).to.equal(400);
    // Nothing of the refused requests was kept.
    expect(fs.readdirSync(path.join(svc.dataDir, 'jobs'))).to.deep.equal([]);
  });

  it('a check that returns 0 renews the reference of its slot from the clip; one that returns more than 0 against its own slot\'s reference does not', async () => {
    await putReference('dock-3', media.referenceNear, '2026-11-24T22:40:00Z'); // slot 23:00-24:00
    // 02:30 in Berlin: the 23:40 reference is the nearest; the clip scores 0 against it.
    const zero = finished(await check({ camera: 'dock-3', captured_at: '2026-11-25T01:30:00Z' }));
    expect(zero.probability).to.equal(0);
    let cam = await camera('dock-3');
    expect(cam.reference_count).to.equal(2);
    const renewed = cam.references.find((s: any) => s.slot === '02:00-03:00');
    expect(renewed, JSON.stringify(cam.references)).to.exist;
    expect(renewed.references[0]).to.include({ source_job: zero.job_id, captured_at: 'Wed, 25 Nov 2026 01:30:00 GMT', width: 320, height: 240 });
    const picture = await fetchChecked(renewed.references[0].image);
    expect(picture.status).to.equal(200);
    expect(picture.headers.get('content-type')).to.equal('image/jpeg');
    expect([...picture.body.subarray(0, 3)]).to.deep.equal([0xff, 0xd8, 0xff]);
    // The next check of that time of day uses the renewed reference.
    const next = finished(await check({ camera: 'dock-3', captured_at: '2026-11-25T01:45:00Z' }));
    expect(next.reference).to.deep.equal({ slot: '02:00-03:00', captured_at: 'Wed, 25 Nov 2026 01:30:00 GMT', source_job: zero.job_id });
    expect(next.probability).to.be.below(50);

    // Against `reference` (40 s later, the pedestrians elsewhere) the same clip scores a few
    // percent, not 0: no renewal.
    await putReference('dock-3', media.reference, '2026-11-25T04:30:00Z'); // slot 05:00-06:00
    const before = await camera('dock-3');
    const nonZero = finished(await check({ camera: 'dock-3', captured_at: '2026-11-25T04:40:00Z' }));
    expect(nonZero.reference.slot).to.equal('05:00-06:00');
    expect(nonZero.probability).to.be.above(0).and.below(50);
    cam = await camera('dock-3');
    expect(cam.reference_count).to.equal(before.reference_count);
    expect(cam.references.find((s: any) => s.slot === '05:00-06:00').references).to.have.length(1);
    expect(cam.checks.map((c: any) => [c.job_id, c.probability])).to.deep.include.members([
      [zero.job_id, 0],
      [nonZero.job_id, nonZero.probability],
    ]);
  });

  it("renews a slot's own reference only from a clip captured RENEW_AFTER_MS (15 minutes) or more after it", async () => {
    await putReference('lane-4', media.referenceNear, '2026-11-25T10:00:00Z'); // 11:00 in Berlin
    const count = async () => (await camera('lane-4')).references.find((s: any) => s.slot === '11:00-12:00').references.length;
    // 5 minutes after it: 0, and nothing renewed
    const early = finished(await check({ camera: 'lane-4', captured_at: '2026-11-25T10:05:00Z' }));
    expect(early.probability).to.equal(0);
    expect(await count()).to.equal(1);
    // 15 minutes after it: renewed
    const due = finished(await check({ camera: 'lane-4', captured_at: '2026-11-25T10:15:00Z' }));
    expect(due.probability).to.equal(0);
    expect(await count()).to.equal(2);
    // 5 minutes after that renewal: checked against it, and nothing renewed
    const after = finished(await check({ camera: 'lane-4', captured_at: '2026-11-25T10:20:00Z' }));
    expect(after.reference).to.deep.equal({ slot: '11:00-12:00', captured_at: 'Wed, 25 Nov 2026 10:15:00 GMT', source_job: due.job_id });
    expect(after.probability).to.equal(0);
    expect(await count()).to.equal(2);
  });

  it("a slot without a reference takes its first from a check under 10 against another slot's, as the first night after a day reference does; a check of 10 or more leaves it empty", async () => {
    await putReference('yard-1', media.referenceNear, '2026-11-25T11:00:00Z'); // slot 12:00-13:00
    // 23:10 in Berlin: the day's picture is the only reference; the night clip keeps a little of
    // the darkening the check excuses, so it does not return 0.
    const night = finished(await check({ camera: 'yard-1', captured_at: '2026-11-25T22:10:00Z' }, { video: media.clipNight }));
    expect(night.reference.slot).to.equal('12:00-13:00');
    expect(night.probability).to.be.above(0).and.below(10);
    let cam = await camera('yard-1');
    const learned = cam.references.find((s: any) => s.slot === '23:00-24:00');
    expect(learned, JSON.stringify(cam.references)).to.exist;
    expect(learned.references[0]).to.include({ source_job: night.job_id, origin: 'renewed', captured_at: 'Wed, 25 Nov 2026 22:10:00 GMT' });
    // The night's next check compares night with night, and with its own slot's reference it
    // renews only at 0.
    const next = finished(await check({ camera: 'yard-1', captured_at: '2026-11-25T22:40:00Z' }, { video: media.clipNight }));
    expect(next.reference).to.deep.equal({ slot: '23:00-24:00', captured_at: 'Wed, 25 Nov 2026 22:10:00 GMT', source_job: night.job_id });
    expect(next.probability).to.be.at.most(night.probability);
    cam = await camera('yard-1');
    expect(cam.references.find((s: any) => s.slot === '23:00-24:00').references).to.have.length(next.probability === 0 ? 2 : 1);

    // 06:10: a covered view against the nearest reference (12:00's) fills no empty slot.
    const covered = finished(await check({ camera: 'yard-1', captured_at: '2026-11-25T05:10:00Z' }, { video: media.clipCovered }));
    expect(covered.reference.slot).to.equal('12:00-13:00');
    expect(covered.probability).to.be.at.least(10);
    cam = await camera('yard-1');
    expect(cam.references.map((s: any) => s.slot)).to.deep.equal(['12:00-13:00', '23:00-24:00']);
  });

  it("an alarm against a reference the appliance renewed is checked again against its slot's older one: a light the renewal kept is set aside, tampering stands", async () => {
    await putReference('gate-7', media.referenceNear, '2026-11-25T10:00:00Z'); // 11:00 in Berlin
    // The slot renewed from a clip through which a car's light lingered: the median kept its pool.
    const renewLit = async (capturedAt: string) => {
      await addLitRenewal(svc.service, svc.dataDir, 'gate-7', media.referenceNear, capturedAt);
      return new Date(capturedAt).toUTCString();
    };
    const slotRefs = async () => (await camera('gate-7')).references.find((s: any) => s.slot === '11:00-12:00').references.map((r: any) => r.captured_at);
    const lit = await renewLit('2026-11-25T10:15:00Z');
    expect(await slotRefs()).to.deep.equal([lit, 'Wed, 25 Nov 2026 10:00:00 GMT']);

    // The light has gone: against the renewed picture its pool reads as covered, against the
    // older one the clip is quiet; the renewed one leaves the slot.
    const quiet = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:30:00Z' }));
    expect(quiet.reference.captured_at).to.equal('Wed, 25 Nov 2026 10:15:00 GMT');
    expect(quiet.second_opinion, JSON.stringify(quiet)).to.deep.include({ reference_set_aside: true, reference: { slot: '11:00-12:00', captured_at: 'Wed, 25 Nov 2026 10:00:00 GMT', source_job: null } });
    expect(quiet.second_opinion.first_probability).to.be.at.least(50);
    expect(quiet.probability).to.equal(quiet.second_opinion.probability).and.below(25); // quiet: under half the line
    expect(quiet.causes.masked).to.be.below(50);
    expect(await slotRefs()).to.deep.equal(['Wed, 25 Nov 2026 10:00:00 GMT']);
    expect((await camera('gate-7')).state).to.equal('ok');
    // The operator's record: the appliance (by null) set it aside, with both answers and the check.
    const history = (await api(`${svc.url}/cameras/gate-7/history`)).body.history;
    expect(history).to.have.length(1);
    expect(history[0]).to.deep.include({
      kind: 'reference_set_aside',
      by: null,
      job_id: quiet.job_id,
      reference: quiet.reference,
      probability: quiet.second_opinion.first_probability,
      older_reference: quiet.second_opinion.reference,
      older_probability: quiet.probability,
    });
    // The next check uses the older reference, and asks no second opinion of a reference set by
    // hand; at 0, it renews the slot as usual.
    const next = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:31:00Z' }));
    expect(next.reference.captured_at).to.equal('Wed, 25 Nov 2026 10:00:00 GMT');
    expect(next).to.not.have.property('second_opinion');
    expect(next.probability).to.equal(0);
    expect(await slotRefs()).to.deep.equal(['Wed, 25 Nov 2026 10:31:00 GMT', 'Wed, 25 Nov 2026 10:00:00 GMT']);

    // A covered view alarms against both the lit picture and the one before it (the 10:31
    // renewal): its answer stands and the lit picture stays.
    const lit2 = await renewLit('2026-11-25T10:45:00Z');
    const covered = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:50:00Z' }, { video: media.clipCovered }));
    expect(covered.second_opinion, JSON.stringify(covered)).to.include({ reference_set_aside: false });
    expect(covered.second_opinion.probability).to.be.at.least(50);
    expect(covered.probability).to.equal(covered.second_opinion.first_probability).and.at.least(50);
    expect(covered.second_opinion.reference.captured_at).to.equal('Wed, 25 Nov 2026 10:31:00 GMT');
    expect(await slotRefs()).to.deep.equal([lit2, 'Wed, 25 Nov 2026 10:31:00 GMT', 'Wed, 25 Nov 2026 10:00:00 GMT']);
    expect((await api(`${svc.url}/cameras/gate-7/history`)).body.history).to.have.length(1);
    // The light gone, the lit picture is set aside like the first; against the clean renewal, a
    // quiet clip asks for no second opinion.
    const gone = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:51:00Z' }));
    expect(gone.second_opinion).to.include({ reference_set_aside: true });
    expect(await slotRefs()).to.deep.equal(['Wed, 25 Nov 2026 10:31:00 GMT', 'Wed, 25 Nov 2026 10:00:00 GMT']);
    const fine = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:52:00Z' }));
    expect(fine.reference.captured_at).to.equal('Wed, 25 Nov 2026 10:31:00 GMT');
    expect(fine.probability).to.be.below(50);
    expect(fine).to.not.have.property('second_opinion');

    // An older reference whose file is gone (a queued check outlived the hour the sweep leaves an
    // unlisted file) gives no second opinion: the first answer stands.
    await renewLit('2026-11-25T10:55:00Z');
    const [lit3, older] = (await svc.service.cameras.references('gate-7')).filter((r) => r.slot === slotOf(Date.parse('2026-11-25T10:55:00Z'), 60));
    expect(lit3.origin).to.equal('renewed');
    fs.rmSync(path.join(svc.dataDir, older.file));
    const alone = finished(await check({ camera: 'gate-7', captured_at: '2026-11-25T10:56:00Z' }));
    expect(alone.probability).to.be.at.least(50);
    expect(alone).to.not.have.property('second_opinion');
  });

  it('raises the alarm after ALARM_AFTER consecutive checks >= 50 and clears it after CLEAR_AFTER < 50, not before; each change is a signed event', async () => {
    // Every event to WEBHOOK_URL; the check that completes a streak also sends to its callback_url.
    const all = await WebhookReceiver.start();
    const own = await WebhookReceiver.start();
    await svc.stop();
    svc = await startTestService({ ...(await backend.env()), KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '2', CLEAR_AFTER: '2', WEBHOOK_URL: all.url });
    try {
      await putReference('hall-4', media.referenceNear);
      const steps: [string, 'ok' | 'tampered'][] = [
        [media.clipCovered, 'ok'], // one high check: no alarm yet
        [media.clip, 'ok'], // a low one resets the count
        [media.clipCovered, 'ok'],
        [media.clipCovered, 'tampered'], // two in a row
        [media.clip, 'tampered'], // one low check: still tampered
        [media.clipCovered, 'tampered'], // and a high one resets the count
        [media.clip, 'tampered'],
        [media.clip, 'ok'], // two low in a row
      ];
      const ids: string[] = [];
      let since = (await camera('hall-4')).state_since;
      let previous = 'ok';
      for (const [clip, state] of steps) {
        const task = finished(await check({ camera: 'hall-4', callback_url: own.url }, { video: clip }));
        expect(task.probability >= 50).to.equal(clip === media.clipCovered);
        ids.push(task.job_id);
        const cam = await camera('hall-4');
        expect(cam.state, `after ${ids.length} checks`).to.equal(state);
        expect(cam.last_check).to.deep.equal({ job_id: task.job_id, probability: task.probability, finish_time: task.finish_time });
        // The state's time is its change's: the finish of the check that turned it (HTTP-dates have whole seconds).
        expect(cam.state_since).to.equal(state === previous ? since : task.finish_time);
        since = cam.state_since;
        previous = state;
        if (ids.length === 4) {
          const metrics = (await api(`${svc.url}/metrics`)).body as string;
          expect(metrics).to.include('vaa_cameras{state="tampered"} 1').and.include('vaa_cameras{state="ok"} 0');
        }
      }
      const cam = await camera('hall-4');
      expect(cam.checks.map((c: any) => c.job_id)).to.deep.equal([...ids].reverse());
      expect(cam.checks.map((c: any) => c.state)).to.deep.equal(steps.map(([, s]) => s).reverse());
      const listed = (await api(`${svc.url}/cameras`)).body.cameras;
      expect(listed).to.deep.equal([
        {
          camera: 'hall-4',
          state: 'ok',
          state_since: cam.state_since,
          offline_reason: null,
          last_check: cam.last_check,
          reference_count: cam.reference_count,
          acknowledgement: null,
          tampered_at: 50,
          reference_image: listed[0].reference_image,
          reference_thumbnail: listed[0].reference_thumbnail,
          source: null,
        },
      ]);
      expect(listed[0].reference_image).to.match(/\/cameras\/hall-4\/references\/[0-9a-f-]{36}\?expires=\d+&sig=[0-9a-f]{64}$/);
      // The state changes, newest first, each with its check.
      const changes = (await api(`${svc.url}/cameras/hall-4/state_changes`)).body.state_changes;
      expect(changes.map((c: any) => [c.from, c.to, c.job_id, c.reason])).to.deep.equal([
        ['tampered', 'ok', ids[7], null],
        ['ok', 'tampered', ids[3], null],
      ]);

      // Both receivers get a job.completed per check and the two changes of state, signed, in order.
      const secret = fs.readFileSync(path.join(svc.dataDir, 'webhook-secret'), 'utf8').trim();
      for (const receiver of [all, own]) {
        await until('every event delivered', () => receiver.requests.length >= ids.length + 2, 20_000);
        const types = receiver.requests.map((r) => r.headers['x-event-type']);
        expect(types.filter((t) => t === 'job.completed')).to.have.length(ids.length);
        const changed = receiver.requests.filter((r) => r.headers['x-event-type'] === 'camera.state_changed');
        expect(changed.map((r) => JSON.parse(r.body)).map((b) => [b.previous_state, b.state, b.job_id, b.camera.camera])).to.deep.equal([
          ['ok', 'tampered', ids[3], 'hall-4'],
          ['tampered', 'ok', ids[7], 'hall-4'],
        ]);
        for (const r of changed) {
          expect(verifySignature(secret, String(r.headers['x-timestamp']), r.body, String(r.headers['x-signature']))).to.equal(true);
        }
        // The change follows the completion of the check that made it.
        const seq = receiver.requests.map((r) => `${r.headers['x-event-type']}:${JSON.parse(r.body).task?.job_id ?? JSON.parse(r.body).job_id}`);
        expect(seq.indexOf(`camera.state_changed:${ids[3]}`)).to.equal(seq.indexOf(`job.completed:${ids[3]}`) + 1);
      }
      // One event, one id, for both receivers.
      const id = (r: WebhookReceiver) => r.requests.filter((q) => q.headers['x-event-type'] === 'camera.state_changed').map((q) => q.headers['x-event-id']);
      expect(id(all)).to.deep.equal(id(own));
    } finally {
      await all.close();
      await own.close();
    }
  });
});

describeBackends('camera bookkeeping in the job store', function (backend) {
  let dir: string;
  let opened: TestStores[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-cameras-'));
  });
  afterEach(async () => {
    for (const s of new Set(opened)) await s.close();
    opened = [];
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const hook = (stores: TestStores, alarmAfter: number) =>
    cameraFinishHook({ ...stores, alarmAfter, clearAfter: 2, offlineAfter: 2, targets: { webhookUrl: 'http://127.0.0.1:9/events' }, dataDir: os.tmpdir() });

  /** A tamper check of `camera` as the route accepts it: the job and its pending check in one transaction. */
  const insertCheck = (stores: TestStores, id: string, camera: string) =>
    stores.jobs.insert(
      { id, analytic: 'kamcheck', input: {} },
      { alongside: (tx) => stores.cameras.insertPendingCheck(tx, { jobId: id, camera, capturedAt: Date.now(), width: 320, height: 240, refresh: null }) },
    );

  /** A finished tamper check of `camera` with `probability`, through claim and complete like the queue's. */
  async function finishCheck(stores: TestStores, camera: string, probability: number): Promise<string> {
    const store = stores.jobs;
    const id = randomUUID();
    await insertCheck(stores, id, camera);
    for (;;) {
      const job = await store.claim('test', 60_000);
      if (!job) throw new Error('nothing to claim');
      // Another claimer may have taken ours first; finish whatever this one got.
      expect(await store.complete({ id: job.id, attempt: job.attempts }, 'done', { probability })).to.equal(true);
      if (job.id === id) return id;
    }
  }

  it('keeps the last 50 checks of a camera, and the outcome, the state and the event commit together', async function () {
    this.timeout(120_000);
    const stores = await backend.openStores(dir);
    opened.push(stores);
    const store = stores.jobs;
    store.onFinish(hook(stores, 2));
    await stores.cameras.addReference({ id: randomUUID(), camera: 'c1', slot: 0, capturedAt: 0, minuteOfDay: 0, sourceJob: null, file: 'references/x.jpg', width: 320, height: 240, createdAt: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await finishCheck(stores, 'c1', i === 51 || i === 52 ? 90 : 10));
    const checks = await stores.cameras.checks('c1');
    expect(checks.map((c) => c.jobId)).to.deep.equal(ids.slice(-50).reverse());
    expect(checks[0]).to.include({ success: true, probability: 90, state: 'tampered' });
    expect(checks[1]).to.include({ probability: 90, state: 'ok' });
    const camera = await stores.cameras.get('c1');
    expect(camera).to.include({ state: 'tampered', streak: 0, lastJobId: ids[52], lastProbability: 90 });
    // One event for the one change of state, to WEBHOOK_URL, with the body the API shows.
    const events = await stores.db.sql.all<{ event_type: string; body: string; url: string }>('SELECT event_type, body, url FROM webhook_outbox');
    expect(events.map((e) => [e.event_type, e.url])).to.deep.equal([['camera.state_changed', 'http://127.0.0.1:9/events']]);
    const body = JSON.parse(events[0].body);
    expect(body).to.include({ status: 'success', event: 'camera.state_changed', previous_state: 'ok', state: 'tampered', job_id: ids[52] });
    expect(body.camera).to.include({ camera: 'c1', state: 'tampered' });

    // A hook that fails is undone alone: the outcome and the other hook's writes are still recorded,
    // nothing half-written of its own stays.
    const errors: unknown[] = [];
    store.onFinish(async (tx) => {
      await tx.run(`UPDATE cameras SET streak = 99 WHERE id = 'c1'`);
      throw new Error('hook defect');
    }, (err) => errors.push(err));
    const id = await finishCheck(stores, 'c1', 95);
    expect((await store.get(id))!.state).to.equal('done');
    expect(errors).to.have.length(1);
    expect((await stores.cameras.checks('c1'))[0].jobId).to.equal(id);
    expect(await stores.cameras.get('c1')).to.include({ streak: 0, lastJobId: id });
  });

  // Four claimers finish checks of one camera at once. On PostgreSQL they are four nodes, each on
  // connections of its own, and the camera's row lock makes them count in turn. On SQLite they
  // are four chains of calls on the box's one connection, whose transactions run one at a time
  // while the claims outside them interleave with those transactions.
  /** Four claimers on the test's folder (four nodes on PostgreSQL), each recording the checks' outcomes. */
  async function openClaimers(): Promise<TestStores[]> {
    const claimers = await backend.openNodes(dir, 4);
    opened.push(...claimers);
    for (const stores of new Set(claimers)) stores.jobs.onFinish(hook(stores, 1000));
    return claimers;
  }

  /** Every queued check, `total` of them, finished at once by all `claimers` with `result` (and `report`); several of them finish some. */
  async function finishAtOnce(claimers: TestStores[], total: number, result: Record<string, unknown>, report?: Record<string, unknown>): Promise<void> {
    const finished = await Promise.all(
      claimers.map(async ({ jobs }, i) => {
        let n = 0;
        for (let job; (job = await jobs.claim(`node-${i}`, 60_000)); n++) {
          expect(await jobs.complete({ id: job.id, attempt: job.attempts }, 'done', result, { report })).to.equal(true);
        }
        return n;
      }),
    );
    expect(finished.reduce((a, b) => a + b)).to.equal(total);
    expect(finished.filter((n) => n > 0).length, 'several claimers finished checks').to.be.above(1);
  }

  it('checks of one camera finishing at once from several claimers each count once', async function () {
    this.timeout(120_000);
    const claimers = await openClaimers();
    const [first] = claimers;
    await first.cameras.addReference({ id: randomUUID(), camera: 'c2', slot: 0, capturedAt: 0, minuteOfDay: 0, sourceJob: null, file: 'references/y.jpg', width: 320, height: 240, createdAt: 1 });
    const total = claimers.length * 10;
    for (let i = 0; i < total; i++) await insertCheck(first, randomUUID(), 'c2');
    await finishAtOnce(claimers, total, { probability: 80 });
    expect((await first.cameras.get('c2'))!.streak).to.equal(total);
    expect(await first.cameras.checks('c2')).to.have.length(total);
  });

  // Checks queued together against one renewed reference all ask the same second opinion: on
  // several nodes at once, the reference leaves its slot once and the history says so once.
  it('checks that set aside the same renewed reference at once, on several claimers, take it out and record it once', async function () {
    this.timeout(120_000);
    const claimers = await openClaimers();
    const [first] = claimers;
    const older = { id: randomUUID(), camera: 'c3', slot: 0, capturedAt: 0, minuteOfDay: 0, sourceJob: null, file: 'references/o.jpg', width: 320, height: 240, createdAt: 1, origin: 'uploaded' as const };
    const renewed = { ...older, id: randomUUID(), capturedAt: 1000, sourceJob: randomUUID(), file: 'references/r.jpg', createdAt: 2, origin: 'renewed' as const };
    await first.cameras.addReference(older);
    await first.cameras.addReference(renewed);
    const total = 12;
    for (let i = 0; i < total; i++) await insertCheck(first, randomUUID(), 'c3');
    const second_opinion = { reference: { slot: '00:00-01:00', captured_at: 'Thu, 01 Jan 1970 00:00:00 GMT', source_job: null }, probability: 0, first_probability: 90, reference_set_aside: true };
    await finishAtOnce(claimers, total, { probability: 0, second_opinion }, { setAsideReference: renewed.id });
    expect((await first.cameras.references('c3')).map((r) => r.id)).to.deep.equal([older.id]);
    const history = await first.cameras.history('c3');
    expect(history.map((h) => h.kind)).to.deep.equal(['reference_set_aside']);
    expect(history[0].detail).to.include({ probability: 90, older_probability: 0 });
    // A reference set by hand is never taken out, whatever a report says.
    const id = randomUUID();
    await insertCheck(first, id, 'c3');
    const job = (await first.jobs.claim('node-0', 60_000))!;
    expect(job.id).to.equal(id);
    await first.jobs.complete({ id, attempt: job.attempts }, 'done', { probability: 0 }, { report: { setAsideReference: older.id } });
    expect((await first.cameras.references('c3')).map((r) => r.id)).to.deep.equal([older.id]);
    expect(await first.cameras.history('c3')).to.have.length(1);
  });
});
