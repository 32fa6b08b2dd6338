// The console's parts for a camera's settings and alarm, against the real API with an alarm raised
// by a real check: an ignore area drawn on the reference picture, sensitivity and an arming
// schedule, the alarm acknowledged with a comment (and the comment changed), the camera reset after
// repair, a renewed reference the appliance set aside; each checked through the API and on the
// page, with the history the page shows.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { api, form, PASSWORD, startTestService, type TestService, USER } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { addLitRenewal } from '../testkit/lit-renewal.js';
import { ARTIFACTS_DIR, brokenImages, launchBrowser, screenshots, signIn, type BrowserSession } from './helpers/browser.js';

const CAMERA = 'lobby-4';
/** Copies of this file's screenshots, to look at without digging into build/. */
const SHOTS_COPY_DIR = '/tmp/console-shots';
/** How far a saved point may lie from where the test clicked, as a fraction of the picture. */
const POINT_TOLERANCE = 0.02;
/** The corners the test clicks, as fractions of the picture's width and height. */
const CLICKED: [number, number][] = [
  [0.1, 0.1],
  [0.42, 0.12],
  [0.4, 0.46],
  [0.08, 0.4],
];

describe('operator console: a camera\'s settings, ignore areas and alarm', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService;
  let browser: BrowserSession;
  let page: Page;

  const camera = async () => {
    const res = await api(`${svc.url}/cameras/${CAMERA}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.camera;
  };
  const copyShots = (name: string) => {
    fs.mkdirSync(SHOTS_COPY_DIR, { recursive: true });
    for (const f of fs.readdirSync(ARTIFACTS_DIR).filter((f) => f.startsWith(`${name}-`) || f === `${name}.png`)) {
      fs.copyFileSync(path.join(ARTIFACTS_DIR, f), path.join(SHOTS_COPY_DIR, f));
    }
  };
  /**
   * One part of the page as it is now, beside the helpers' full pages: cut from the full page
   * scrolled to its top, so the sticky top bar covers none of it.
   */
  const partShot = async (part: Locator, name: string) => {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = (await part.boundingBox())!;
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`), fullPage: true, clip: box });
    copyShots(name);
  };

  before(async function () {
    this.timeout(90_000);
    media = testMedia();
    svc = await startTestService({ KAMCHECK_WAIT_MS: '30000' });
    const ref = await api(`${svc.url}/cameras/${CAMERA}/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    expect(ref.status, JSON.stringify(ref.body)).to.equal(200);
    const put = await api(`${svc.url}/cameras/${CAMERA}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ alarm_after: 1 }) });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    // A covered lens, checked for real: one tampered check is the alarm now.
    const check = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clipCovered }, { camera: CAMERA }) });
    expect(check.status, JSON.stringify(check.body)).to.equal(200);
    expect(check.body.task.probability, JSON.stringify(check.body.task)).to.be.at.least(50);
    expect((await camera()).state).to.equal('tampered');
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, svc.url, USER, PASSWORD);
    await page.goto(`${svc.url}/#/cameras/${CAMERA}`);
    await page.getByRole('heading', { name: 'Ignore areas' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('draws an ignore area on the reference picture by clicking its corners, and saves it where the clicks were', async () => {
    const settings = page.locator('section.settings-card');
    const picture = settings.locator('.area-canvas img');
    await picture.waitFor();
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.area-canvas img');
      return !!img && img.complete && img.naturalWidth > 0;
    });
    await settings.getByRole('button', { name: 'Draw a new area' }).click();
    const box = (await picture.boundingBox())!;
    for (const [x, y] of CLICKED) await picture.click({ position: { x: x * box.width, y: y * box.height } });
    await settings.getByText('4 points.').waitFor();
    await partShot(settings, 'camera-settings-drawing');
    await settings.getByRole('button', { name: 'Finish area' }).click();
    await settings.getByRole('button', { name: 'Remove area 1' }).waitFor();
    expect(await settings.locator('.area-overlay .area-hatch').count()).to.equal(1);
    await settings.getByRole('button', { name: 'Save areas' }).click();
    await settings.getByRole('status').filter({ hasText: 'Areas saved.' }).waitFor();

    const areas = (await camera()).settings.ignore_areas as [number, number][][];
    expect(areas).to.have.length(1);
    expect(areas[0]).to.have.length(CLICKED.length);
    areas[0].forEach(([x, y], i) => {
      expect(x, `point ${i} x`).to.be.closeTo(CLICKED[i][0], POINT_TOLERANCE);
      expect(y, `point ${i} y`).to.be.closeTo(CLICKED[i][1], POINT_TOLERANCE);
    });
    await page.locator('.history').getByText('ignore areas: none → 1 area').waitFor();

    // Without a mouse: the picture takes the focus, Enter adds a point at the cross, the arrow
    // keys move it, Escape gives the new area up.
    await settings.getByRole('button', { name: 'Draw a new area' }).click();
    // the picture takes the focus once the drawing has rendered (an effect after the paint)
    await page.waitForFunction(() => document.activeElement?.classList.contains('area-canvas') === true, undefined, { timeout: 5000 });
    await page.keyboard.press('Enter');
    await settings.getByText('1 point.').waitFor();
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.press('Enter');
    await settings.getByText('2 points.').waitFor();
    expect(await settings.locator('.area-point').count()).to.equal(2);
    await page.keyboard.press('Escape');
    await settings.getByRole('button', { name: 'Draw a new area' }).waitFor();
    expect(await settings.locator('.area-list li').count()).to.equal(1);
    expect(await settings.getByRole('button', { name: 'Save areas' }).isDisabled(), 'nothing new to save').to.equal(true);
    expect(await brokenImages(page)).to.deep.equal([]);
    await partShot(settings, 'camera-settings-area');
    await screenshots(page, 'camera-settings-area');
    copyShots('camera-settings-area');
  });

  it('sets the sensitivity and an arming schedule; only what changed is sent', async () => {
    const settings = page.locator('section.settings-card');
    await settings.getByLabel('Sensitivity').selectOption('high');
    await settings.getByText('A check counts as tampered from a probability of 35').waitFor();
    await settings.getByText('Always armed: no period set.').waitFor();
    await settings.getByRole('button', { name: 'Add a period' }).click();
    const period = settings.getByRole('group', { name: 'Period 1' });
    await period.getByRole('button', { name: 'Monday' }).click();
    await period.getByRole('button', { name: 'Saturday' }).click();
    expect(await period.getByRole('button', { name: 'Saturday' }).getAttribute('aria-pressed')).to.equal('true');
    expect(await period.getByRole('button', { name: 'Monday' }).getAttribute('aria-pressed')).to.equal('false');
    await period.getByLabel('From').fill('22:00');
    await period.getByLabel('to', { exact: true }).fill('06:30');
    await period.getByText('Runs past midnight into the next day.').waitFor();
    await settings.getByLabel('Time zone of the schedule').fill('Europe/Berlin');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();

    const cam = await camera();
    expect(cam.settings).to.deep.include({ sensitivity: 'high', alarm_after: 1, time_zone: 'Europe/Berlin' });
    expect(cam.settings.armed).to.deep.equal([{ days: ['tue', 'wed', 'thu', 'fri', 'sat'], from: '22:00', to: '06:30' }]);
    const [latest] = (await api(`${svc.url}/cameras/${CAMERA}/history`)).body.history;
    expect(latest).to.deep.include({ kind: 'settings', by: USER, sensitivity: { from: 'medium', to: 'high' } });
    expect(Object.keys(latest), 'only the changed settings are sent').to.have.members(['at', 'kind', 'by', 'sensitivity', 'armed', 'time_zone']);
    // The page says what the API says, armed now or not.
    const alarm = page.locator('section.alarm-card');
    await alarm.locator('.armed-line').filter({ hasText: `${cam.armed_now ? 'Armed now' : 'Disarmed now'} Schedule: Tue–Sat 22:00–06:30 (Europe/Berlin).` }).waitFor();
    await page.locator('.history').getByText('sensitivity: medium → high').waitFor();
    await page.locator('.history').getByText('armed: always → Tue–Sat 22:00–06:30').waitFor();
    // A period without a day is refused before anything is sent.
    await settings.getByRole('button', { name: 'Add a period' }).click();
    const second = settings.getByRole('group', { name: 'Period 2' });
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) await second.getByRole('button', { name: day }).click();
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByRole('alert').filter({ hasText: 'period 2 has no day' }).waitFor();
    await settings.getByRole('button', { name: 'Remove period 2' }).click();
    expect((await camera()).settings.armed).to.have.length(1);
  });

  it('names the camera in XProtect with its own tamper message, shows it in the history, and stops sending', async () => {
    const form = page.locator('form.milestone-form');
    await form.getByText("This camera's changes of state are not sent to XProtect").waitFor();
    await form.getByRole('button', { name: 'Save XProtect settings' }).click();
    await form.getByRole('alert').filter({ hasText: "give the camera's name or address in XProtect" }).waitFor();
    await form.getByLabel('Camera in XProtect').fill('Lobby 4 (192.168.0.199)');
    await form.getByLabel('Its id (optional)').fill('not a guid');
    await form.getByRole('button', { name: 'Save XProtect settings' }).click();
    await form.getByRole('alert').filter({ hasText: "the camera's id in XProtect is a GUID" }).waitFor();
    expect((await camera()).settings.milestone, 'nothing sent').to.equal(null);
    await form.getByLabel('Its id (optional)').fill('1F3BD6A1-4B8E-4BD0-9F56-5D1C6D2B1A10');
    await form.getByLabel('Message: Tampered').fill('Lobby tamper alarm');
    expect(await form.getByLabel('Message: Back to OK').getAttribute('placeholder')).to.equal('Camera OK');
    await form.getByRole('button', { name: 'Save XProtect settings' }).click();
    await form.getByRole('status').filter({ hasText: 'XProtect settings saved' }).waitFor();
    expect((await camera()).settings.milestone).to.deep.equal({
      source_name: 'Lobby 4 (192.168.0.199)',
      source_object_id: '1f3bd6a1-4b8e-4bd0-9f56-5d1c6d2b1a10',
      messages: { tampered: 'Lobby tamper alarm', offline: 'Camera offline', ok: 'Camera OK' },
    });
    // a default message stays a default: the field is empty, its placeholder the default
    expect(await form.getByLabel('Message: Offline').inputValue()).to.equal('');
    await form.getByText("This camera's changes of state go to XProtect as analytics events").waitFor();
    await page.locator('.history').getByText('XProtect events: not sent → XProtect camera "Lobby 4 (192.168.0.199)"').waitFor();
    await partShot(form, 'camera-settings-milestone');
    await form.getByRole('button', { name: 'Stop sending' }).click();
    await form.getByRole('status').filter({ hasText: 'No more events of this camera go to XProtect.' }).waitFor();
    expect((await camera()).settings.milestone).to.equal(null);
    expect(await form.getByLabel('Camera in XProtect').inputValue()).to.equal('');
  });

  it('acknowledges the alarm with a comment, shows who did and when, and changes the comment', async () => {
    const alarm = page.locator('section.alarm-card');
    await alarm.getByText('Not acknowledged yet.').waitFor();
    await alarm.getByLabel('Comment (optional)').fill('Technician on the way');
    await alarm.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await alarm.locator('.ack-done').filter({ hasText: `Acknowledged by ${USER}` }).waitFor();
    let ack = (await camera()).acknowledgement;
    expect(ack).to.include({ acknowledged_by: USER, comment: 'Technician on the way' });
    expect(await alarm.locator('.ack-comment').innerText()).to.equal('“Technician on the way”');

    await alarm.getByRole('button', { name: 'Change the comment…' }).click();
    await alarm.getByLabel('New comment').fill('Technician on site, ticket 4711');
    await alarm.getByRole('button', { name: 'Acknowledge again' }).click();
    await alarm.locator('.ack-comment').filter({ hasText: 'Technician on site, ticket 4711' }).waitFor();
    ack = (await camera()).acknowledgement;
    expect(ack).to.include({ acknowledged_by: USER, comment: 'Technician on site, ticket 4711' });
    await page.locator('.history').getByText('“Technician on site, ticket 4711”').waitFor();
    expect(await page.locator('.page-head .badge').innerText()).to.equal('Tampered');
    await partShot(alarm, 'camera-alarm-acknowledged');
    await partShot(page.locator('.alarm-row'), 'camera-alarm-row-acknowledged');
    await screenshots(page, 'camera-alarm-acknowledged');
    copyShots('camera-alarm-acknowledged');
  });

  it('resets the camera after repair, after a confirmation, with a comment', async () => {
    const alarm = page.locator('section.alarm-card');
    // where the focus is when the comment field is first in the page (a mutation observer's
    // callback runs before the browser paints what it saw): there already, so that an operator's
    // first key lands in it
    await page.evaluate(() => {
      const seen = new MutationObserver(() => {
        if (!document.getElementById('reset-comment')) return;
        (window as unknown as { focusAtShow?: string }).focusAtShow = document.activeElement?.id ?? '';
        seen.disconnect();
      });
      seen.observe(document.body, { childList: true, subtree: true });
    });
    await alarm.getByRole('button', { name: 'Reset after repair…' }).click();
    const confirm = alarm.getByRole('alertdialog');
    await confirm.getByText('Reset lobby-4 to OK?').waitFor();
    expect(await page.evaluate(() => (window as unknown as { focusAtShow?: string }).focusAtShow)).to.equal('reset-comment');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('reset-comment');
    await page.keyboard.type('Lens cleaned');
    await confirm.getByRole('button', { name: `Yes, reset ${CAMERA}` }).click();
    await alarm.getByRole('status').filter({ hasText: 'Reset: the camera is OK again' }).waitFor();
    const cam = await camera();
    expect(cam).to.include({ state: 'ok', alarm_streak: 0, acknowledgement: null, alarm_held: false });
    expect(cam.settings.ignore_areas, 'a reset keeps the settings').to.have.length(1);
    expect(cam.reference_count, 'a reset keeps the references').to.equal(1);
    expect(cam.history[0]).to.include({ kind: 'reset', by: USER, comment: 'Lens cleaned', previous_state: 'tampered' });
    await page.locator('.page-head .badge').filter({ hasText: 'OK' }).waitFor();
    await alarm.getByText('No alarm: the checks say the camera is OK.').waitFor();
    await page.locator('.history > li').first().filter({ hasText: 'Reset after repair' }).filter({ hasText: '“Lens cleaned”' }).waitFor();
    expect(await brokenImages(page)).to.deep.equal([]);
    await partShot(page.locator('.alarm-row'), 'camera-alarm-after-reset');
  });

  it('tells in the history of a renewed reference the appliance set aside, with both answers and the check', async () => {
    // A renewal that kept a car's light, in the slot of the reference set by hand, newer than it.
    const manual = (await camera()).references[0].references[0];
    await addLitRenewal(svc.service, svc.dataDir, CAMERA, media.referenceNear, new Date(manual.captured_at).toISOString());
    const check = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip }, { camera: CAMERA }) });
    expect(check.status, JSON.stringify(check.body)).to.equal(200);
    const task = check.body.task;
    expect(task.second_opinion, JSON.stringify(task)).to.include({ reference_set_aside: true });
    await page.reload();
    const entry = page.locator('.history > li').first();
    await entry.filter({ hasText: 'Renewed reference set aside' }).filter({ hasText: 'by the appliance' }).waitFor();
    const words = await entry.locator('.history-detail').innerText();
    expect(words).to.include(`scored ${task.second_opinion.first_probability}%`).and.include(`${task.second_opinion.probability}%`).and.include(manual.slot);
    expect(await entry.getByRole('link', { name: 'The check' }).getAttribute('href')).to.equal(`#/kamcheck/${task.job_id}`);
    await partShot(page.locator('section.history-card'), 'camera-history-set-aside');
    // The check's own page says what both references said, and which answer it gives.
    await entry.getByRole('link', { name: 'The check' }).click();
    const opinion = page.locator('dd.second-opinion');
    await opinion.waitFor();
    expect(await opinion.innerText()).to.include(`${task.second_opinion.first_probability}%`).and.include('was set aside');
    expect(await page.locator('.probability-big').innerText()).to.include(`${task.probability}%`);
    await partShot(page.locator('section.result'), 'kamcheck-second-opinion');
  });

  it('loaded nothing from another origin, and no script failed', () => {
    const origin = new URL(svc.url).origin;
    expect(browser.requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin)).to.deep.equal([]);
    expect(browser.errors).to.deep.equal([]);
  });
});
