// The operator console in a real browser (Debian's chromium through playwright-core) against
// the real service with real data: a camera driven to `tampered` by real checks, a real face log
// with gender. Sign-in, the cameras overview updating itself, a camera's page and its actions,
// the jobs history with paging, the upload forms (and a refused upload in the API's words), the
// face log's review. Nothing is loaded from another origin and no script fails. Screenshots of
// every page, at 1366x768 and at a tablet's 768x1024, go to build/test-artifacts/console/.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { api, form, PASSWORD, startTestService, type TestService, USER } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { brokenImages, launchBrowser, screenshots, type BrowserSession } from './helpers/browser.js';

/** A face log of two people one after another: a minute at most on a loaded 2-core machine. */
const FACE_LOG_MS = 150_000;
/** The overview reads GET /cameras every 5 s. */
const OVERVIEW_UPDATE_MS = 15_000;

describe('operator console in a real browser', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService;
  let browser: BrowserSession;
  let page: Page;
  /** Failed loads the tests provoke on purpose (a wrong password, a refused upload): path patterns. */
  const provoked: RegExp[] = [];

  const putReference = async (camera: string, image: string) => {
    const res = await api(`${svc.url}/cameras/${camera}/reference`, { method: 'PUT', body: form({ image }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const check = async (fields: Record<string, string>, files: Record<string, string>) => {
    const res = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form(files, fields) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.task.complete, JSON.stringify(res.body.task)).to.equal(true);
    return res.body.task;
  };
  const go = async (hash: string) => {
    await page.evaluate((h) => (location.hash = h), hash);
  };

  before(async function () {
    this.timeout(60_000);
    media = testMedia();
    svc = await startTestService({ KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '2', CLEAR_AFTER: '2', WORKERS: '2' });
    await putReference('gate-1', media.referenceNear);
    await putReference('yard-2', media.referenceNear);
    await check({ camera: 'yard-2' }, { video: media.clip });
    browser = await launchBrowser();
    page = browser.page;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('an unauthenticated visit shows the sign-in form and no data; the page forbids framing and foreign scripts', async () => {
    const res = await page.goto(`${svc.url}/`);
    expect(res!.status()).to.equal(200);
    const headers = res!.headers();
    const csp = headers['content-security-policy'];
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) {
      expect(csp).to.include(directive);
    }
    expect(headers['x-frame-options']).to.equal('DENY');
    expect(headers['x-content-type-options']).to.equal('nosniff');
    await page.getByLabel('User name').waitFor();
    await page.getByLabel('Password').waitFor();
    const text = await page.locator('body').innerText();
    expect(text).to.not.include('gate-1').and.not.include('yard-2');
    // The page asked the API for nothing but whether it is signed in.
    const apiCalls = browser.requests.filter((u) => !/\/console\/|\/$/.test(new URL(u).pathname));
    expect(apiCalls.map((u) => new URL(u).pathname)).to.deep.equal(['/session']);
    await screenshots(page, 'sign-in');
  });

  it('signs in: a wrong password is refused in the API\'s words, the right one opens the cameras with an HttpOnly, SameSite=Strict cookie', async () => {
    provoked.push(/\/session$/);
    await page.getByLabel('User name').fill(USER);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong user name or password' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Cameras' }).waitFor();
    const [cookie] = await browser.context.cookies();
    expect(cookie).to.include({ name: 'vaa_session', httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    // Nothing of the session is in the URL.
    expect(page.url()).to.not.include(cookie.value);
  });

  it('the overview shows every camera with its state, picture, last check and causes; a camera turning tampered shows without a reload', async () => {
    const card = (id: string) => page.locator(`.camera-card[data-camera="${id}"]`);
    await card('gate-1').waitFor();
    await card('yard-2').locator('.causes').waitFor();
    expect(await card('yard-2').getAttribute('data-state')).to.equal('ok');
    expect(await card('yard-2').innerText()).to.include('Last check').and.include('0%').and.include('Masked');
    expect(await card('gate-1').innerText()).to.include('No check yet');
    let navigations = 0;
    page.on('framenavigated', (f) => f === page.mainFrame() && navigations++);

    // Two masked clips in a row: the camera's alarm.
    for (let i = 0; i < 2; i++) expect((await check({ camera: 'gate-1' }, { video: media.clipCovered })).probability).to.be.at.least(50);
    await page.locator('.camera-card[data-camera="gate-1"][data-state="tampered"]').waitFor({ timeout: OVERVIEW_UPDATE_MS });
    expect(navigations).to.equal(0);
    // Trouble first, counted, in colour and in words, with the check's causes.
    expect(await page.locator('.camera-card').first().getAttribute('data-camera')).to.equal('gate-1');
    expect(await page.locator('.chip[data-state="tampered"]').innerText()).to.match(/Tampered\s*1/);
    await card('gate-1').locator('.causes .fill.high').first().waitFor();
    expect(await card('gate-1').locator('.badge').innerText()).to.equal('Tampered');
    expect(await card('gate-1').innerText()).to.include('100%');
    expect(await brokenImages(page)).to.deep.equal([]);
    expect(await page.locator('.camera-card img').count()).to.equal(2);
    await screenshots(page, 'cameras');
  });

  it('a camera\'s page: its pictures, the chart of its checks, its state changes and references; a new reference from a file; delete', async () => {
    await page.locator('.camera-card[data-camera="gate-1"] h2 a').click();
    await page.getByRole('heading', { name: 'Probability of the last checks' }).waitFor();
    const cam = (await api(`${svc.url}/cameras/gate-1`)).body.camera;
    expect(await page.locator('.chart circle').count()).to.equal(cam.checks.length);
    expect(await page.locator('.changes li').first().innerText()).to.match(/OK\s*→\s*Tampered/);
    expect(await page.locator('.slot .picture img').count()).to.equal(cam.reference_count);
    expect(await brokenImages(page)).to.deep.equal([]);

    await page.getByLabel('Picture (JPEG or PNG').setInputFiles(media.reference);
    await page.getByRole('button', { name: 'Set reference' }).click();
    await page.getByRole('status').filter({ hasText: 'The new reference is set.' }).waitFor();
    expect((await api(`${svc.url}/cameras/gate-1`)).body.camera.reference_count).to.equal(cam.reference_count + 1);
    await page.locator('.slot .picture img').nth(cam.reference_count).waitFor();
    await screenshots(page, 'camera');

    await go('#/cameras/yard-2');
    await page.getByRole('button', { name: 'Delete camera…' }).click();
    await page.getByRole('button', { name: 'Yes, delete yard-2' }).click();
    await page.getByRole('status').filter({ hasText: 'Camera yard-2 was deleted.' }).waitFor();
    expect(new URL(page.url()).hash).to.equal('#/cameras');
    expect((await api(`${svc.url}/cameras/yard-2`)).status).to.equal(404);
    await page.locator('.camera-card[data-camera="yard-2"]').waitFor({ state: 'detached' });
  });

  it('a tamper check through the form shows its probability and causes; a refused upload says why in the API\'s words', async () => {
    await go('#/upload/kamcheck');
    await page.getByLabel('Clip (video, at most 25 frames)').setInputFiles(media.clip);
    await page.getByLabel('Reference picture (JPEG or PNG)').setInputFiles(media.referenceNear);
    await page.getByLabel('Camera id (optional)').fill('dock-3');
    await page.getByRole('button', { name: 'Run the check' }).click();
    const result = page.locator('.result');
    await result.locator('.probability-big').waitFor({ timeout: 30_000 });
    const task = (await api(`${svc.url}/kamcheck/${await result.getAttribute('data-job')}`)).body.task;
    expect(task).to.include({ camera: 'dock-3', success: true });
    expect(await result.locator('.probability-big').innerText()).to.include(`${task.probability}%`);
    expect(await result.locator('.cause').count()).to.equal(6);
    expect(await result.getByRole('link', { name: 'dock-3' }).getAttribute('href')).to.equal('#/cameras/dock-3');
    await screenshots(page, 'upload-kamcheck');

    // A reference of another size than the clip: 422, and the page shows the API's message.
    const refused = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.referenceLarge }) });
    expect(refused.status).to.equal(422);
    provoked.push(/\/kamcheck$/);
    await page.getByLabel('Reference picture (JPEG or PNG)').setInputFiles(media.referenceLarge);
    await page.getByLabel('Camera id (optional)').fill('');
    await page.getByRole('button', { name: 'Run the check' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).to.include(refused.body.error.message);
    await screenshots(page, 'upload-kamcheck-refused', [{ width: 1366, height: 768 }]);
  });

  it('the jobs history pages 20 at a time, newest first', async () => {
    const files = { video: media.clip, image: media.referenceNear };
    for (let i = 0; i < 18; i += 3) await Promise.all([0, 1, 2].map(() => check({}, files)));
    const newest = (await api(`${svc.url}/kamcheck/1/20`)).body.tasks.map((t: { job_id: string }) => t.job_id);
    const second = (await api(`${svc.url}/kamcheck/2/20`)).body.tasks.map((t: { job_id: string }) => t.job_id);
    expect(newest).to.have.length(20);
    expect(second.length).to.be.within(1, 19);

    await go('#/jobs/kamcheck/1');
    const links = () => page.locator('tbody tr td:first-child a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).hash.split('/').pop()));
    await page.locator('tbody tr').nth(19).waitFor();
    expect(await links()).to.deep.equal(newest);
    await screenshots(page, 'jobs');
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.getByText('Page 2').waitFor();
    await page.locator('tbody tr').nth(second.length - 1).waitFor();
    expect(await links()).to.deep.equal(second);
    expect(await page.locator('.pager .button.disabled').innerText()).to.include('Older');
    await page.getByRole('link', { name: '← Newer' }).click();
    await page.getByText('Page 1').waitFor();
    // The face logs' tab: empty so far, and says so.
    await page.getByRole('link', { name: 'Face logs' }).click();
    await page.getByText('No jobs yet').waitFor();
  });

  it('a face log through the form, reviewed: the video plays, every image loads, a sighting seeks the video, the timeline, the XML and files', async function () {
    this.timeout(FACE_LOG_MS + 60_000);
    const { file, truth } = facelogVideo('sequence');
    await go('#/upload/face_log');
    await page.getByLabel('Video or image').setInputFiles(file);
    expect(await page.getByLabel('Classify gender').isChecked()).to.equal(true);
    await page.getByRole('button', { name: 'Run the face log' }).click();
    // Done: the review; failed: the job's error, which the test then shows.
    await page.locator('.review, [role="alert"]').first().waitFor({ timeout: FACE_LOG_MS });
    expect(await page.getByRole('alert').count(), await page.locator('main').innerText()).to.equal(0);
    const jobId = (await page.locator('.review').getAttribute('data-job'))!;
    const task = (await api(`${svc.url}/face_log/${jobId}`)).body.task;
    expect(task.sightings).to.have.length(truth.appearances.length);

    await page.getByRole('link', { name: 'Open this face log on its own page' }).click();
    await page.waitForFunction(() => (document.querySelector('video.overlay-video') as HTMLVideoElement | null)?.readyState! >= 2, undefined, { timeout: 20_000 });
    expect(await brokenImages(page)).to.deep.equal([]);
    expect(await page.locator('.sightings img').count()).to.equal(task.sightings.length);
    const cards = page.locator('button.sighting');
    expect(await cards.count()).to.equal(task.sightings.length);
    for (let i = 0; i < task.sightings.length; i++) {
      const s = task.sightings[i];
      expect(s.gender).to.be.oneOf(['male', 'female']);
      expect(await cards.nth(i).innerText()).to.include(s.gender).and.include(`frames ${s.start_frame}–${s.end_frame}`);
    }
    expect(await page.locator('.timeline .mark').count()).to.equal(task.sightings.length);

    // Clicking the last sighting seeks the video to its first frame.
    const last = task.sightings[task.sightings.length - 1];
    const fps = Number(/@([\d.]+)fps$/.exec(task.resolution)![1]);
    await cards.last().click();
    await page.waitForFunction((t) => Math.abs((document.querySelector('video.overlay-video') as HTMLVideoElement).currentTime - t) < 0.05, (last.start_frame + 0.5) / fps);
    expect(await cards.last().getAttribute('class')).to.include('selected');
    expect(await page.locator('.timeline .mark.selected').count()).to.equal(1);
    // The timeline's marks seek too.
    await page.locator('.timeline .mark').first().click();
    await page.waitForFunction((t) => Math.abs((document.querySelector('video.overlay-video') as HTMLVideoElement).currentTime - t) < 0.05, (task.sightings[0].start_frame + 0.5) / fps);

    expect(await page.getByRole('link', { name: 'Every face (XML)' }).getAttribute('href')).to.equal(task.results_xml);
    expect(await page.getByRole('link', { name: 'Overlay video (MP4)' }).getAttribute('href')).to.equal(task.results_video);
    const thumbs = await page.getByRole('link', { name: 'Thumbnail file' }).evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    expect(thumbs).to.deep.equal(task.sightings.map((s: { thumbnail: string }) => s.thumbnail));
    await page.waitForFunction(() => { const v = document.querySelector('video.overlay-video') as HTMLVideoElement; return !v.seeking && v.readyState >= 2; });
    const xml = await fetch(task.results_xml);
    expect(xml.status).to.equal(200);
    expect((await xml.text()).slice(0, 5)).to.equal('<?xml');
    await screenshots(page, 'face-log');

    await go('#/jobs/face_log/1');
    await page.locator(`tbody a[href="#/face_log/${jobId}"]`).waitFor();
  });

  it('signing out ends the session: its cookie opens nothing and the sign-in form is back', async () => {
    const [cookie] = await browser.context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('User name').waitFor();
    const res = await api(`${svc.url}/cameras`, { auth: null, headers: { cookie: `${cookie.name}=${cookie.value}` } });
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/^Session /);
    expect(await browser.context.cookies()).to.deep.equal([]);
  });

  it('loaded nothing from another origin, and no script failed', () => {
    const origin = new URL(svc.url).origin;
    const foreign = browser.requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin);
    expect(foreign).to.deep.equal([]);
    const unexpected = browser.errors.filter((e) => !(e.text.startsWith('Failed to load resource') && provoked.some((p) => p.test(new URL(e.url, origin).pathname))));
    expect(unexpected).to.deep.equal([]);
  });
});
