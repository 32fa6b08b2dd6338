// The console by role, in a real browser against the real service: a viewer is offered no action
// anywhere (the cameras, a camera in alarm, a camera with a stream source, the jobs), an operator
// is offered the actions and no admin page; an admin creates an API key whose secret the page
// shows once (it works with the API, is gone after a reload, and stops working once revoked from
// the page), adds a user who then signs in, meets the appliance's refusals in its own words, and
// reads both in the audit trail. Screenshots of every new page and of the viewer's camera page go
// to build/test-artifacts/console/.
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { api, form, PASSWORD, startTestService, type TestService, USER } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { launchBrowser, screenshots, signIn, type BrowserSession } from './helpers/browser.js';

/** A camera in alarm (a covered lens, checked for real), and one with a stream source. */
const ALARMED = 'lobby-4';
const STREAMED = 'yard-9';
/** An ignore area of the alarmed camera, for the viewer to see and not edit. */
const IGNORED = [
  [0.6, 0.05],
  [0.95, 0.05],
  [0.95, 0.3],
  [0.6, 0.3],
];
const VIEWER = { name: 'vera', password: 'vera reads only' };
const OPERATOR = { name: 'otto', password: 'otto acts on cameras' };
/** The first capture of a stream source: the appliance looks at a new source at once. */
const FIRST_CAPTURE_MS = 60_000;
/** The actions a camera's page offers an operator, by their buttons' names. */
const CAMERA_ACTIONS = ['Acknowledge', 'Reset after repair…', 'Set reference', 'Delete camera…', 'Save settings', 'Draw a new area', 'Save XProtect settings', 'Add a period'];
const SOURCE_ACTIONS = ['Check now', 'Make the last capture the reference', 'Save source'];

describe('operator console: roles, users, API keys and the audit trail', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService;
  let browser: BrowserSession;
  let page: Page;
  let snapshotServer: http.Server;
  /** Failed loads the tests provoke on purpose (refused changes): path patterns. */
  const provoked: RegExp[] = [];

  const json = (method: string, body: unknown, auth?: string) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(auth ? { auth } : {}) });
  const go = (hash: string) => page.evaluate((h) => (location.hash = h), hash);
  /** The names of the enabled buttons and the links of the page's content (not the top bar). */
  const enabledButtons = () => page.locator('main button:not([disabled])').evaluateAll((bs) => bs.map((b) => (b.getAttribute('aria-label') ?? b.textContent ?? '').trim()));
  const navLinks = () => page.locator('.topbar nav a').allInnerTexts();
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('User name').waitFor();
  };
  const openCamera = async (camera: string) => {
    await go(`#/cameras/${camera}`);
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
  };

  before(async function () {
    this.timeout(FIRST_CAPTURE_MS + 60_000);
    media = testMedia();
    svc = await startTestService({ KAMCHECK_WAIT_MS: '30000' });
    expect((await api(`${svc.url}/cameras/${ALARMED}/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) })).status).to.equal(200);
    expect((await api(`${svc.url}/cameras/${ALARMED}`, json('PUT', { alarm_after: 1, ignore_areas: [IGNORED] }))).status).to.equal(200);
    const check = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clipCovered }, { camera: ALARMED }) });
    expect(check.body.task?.probability, JSON.stringify(check.body)).to.be.at.least(50);

    // A snapshot source on this machine: one JPEG over HTTP, its first capture the reference.
    const jpeg = fs.readFileSync(media.referenceNear);
    snapshotServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg));
    await new Promise<void>((r) => snapshotServer.listen(0, '127.0.0.1', r));
    const snapshot = `http://127.0.0.1:${(snapshotServer.address() as AddressInfo).port}/snapshot.jpg`;
    expect((await api(`${svc.url}/cameras/${STREAMED}`, json('PUT', { source_url: snapshot, check_interval_s: 300, enabled: true }))).status).to.equal(200);
    const deadline = Date.now() + FIRST_CAPTURE_MS;
    while ((await api(`${svc.url}/cameras/${STREAMED}`)).body.camera?.source?.last_capture?.outcome !== 'ok') {
      if (Date.now() > deadline) throw new Error(`${STREAMED} has no capture after ${FIRST_CAPTURE_MS} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }

    for (const [user, role] of [
      [VIEWER, 'viewer'],
      [OPERATOR, 'operator'],
    ] as const) {
      const made = await api(`${svc.url}/users`, json('POST', { ...user, role }));
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
    }
    browser = await launchBrowser();
    page = browser.page;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    snapshotServer?.close();
  });

  it("a viewer's console offers no action: no job to run, nothing to change on a camera, no admin page", async () => {
    await signIn(page, svc.url, VIEWER.name, VIEWER.password);
    expect(await page.locator('.topbar .user').innerText()).to.include(VIEWER.name).and.include('Viewer');
    expect(await navLinks()).to.deep.equal(['Cameras', 'Jobs']);

    await page.locator(`.camera-card[data-camera="${ALARMED}"]`).waitFor();
    expect(await page.locator('main a[href^="#/upload"]').count()).to.equal(0);
    // the filters only: they read
    for (const name of await enabledButtons()) expect(name, 'a filter of the list').to.match(/^(All|Not acknowledged|Tampered|Offline|OK)\b/);

    await openCamera(ALARMED);
    await page.locator('.alarm-open').getByText('Not acknowledged yet').waitFor();
    await page.locator('.settings-card dt', { hasText: 'Sensitivity' }).waitFor();
    expect(await enabledButtons()).to.deep.equal([]);
    expect(await page.locator('main form, main input, main select').count(), 'no field to fill').to.equal(0);
    expect(await page.getByRole('heading', { name: 'Actions' }).count()).to.equal(0);
    expect(await page.getByRole('heading', { name: 'Reset after repair' }).count()).to.equal(0);
    // its ignore area, on its reference, with nothing to draw or remove
    await page.locator('.area-canvas img').waitFor();
    expect(await page.locator('.area-overlay .area-hatch').count()).to.equal(1);
    expect(await page.locator('.area-list li').allInnerTexts()).to.have.length(1);
    await screenshots(page, 'viewer-camera');

    await openCamera(STREAMED);
    await page.getByRole('heading', { name: 'Stream source' }).waitFor();
    expect(await page.locator('main').innerText()).to.include('Checked every 300 s').and.include('snapshot.jpg');
    expect(await enabledButtons()).to.deep.equal([]);
    expect(await page.locator('main form, main input, main select').count()).to.equal(0);
    await screenshots(page, 'viewer-camera-source', [{ width: 1366, height: 768 }]);

    await go('#/jobs/kamcheck/1');
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('main a[href^="#/upload"]').count()).to.equal(0);
    expect(await enabledButtons()).to.deep.equal([]);

    // Reached by their address, the pages it may not use say so and offer nothing.
    await go('#/upload/kamcheck');
    await page.getByRole('status').filter({ hasText: 'needs the operator role' }).waitFor();
    expect(await page.locator('main form').count()).to.equal(0);
    await screenshots(page, 'viewer-needs-role', [{ width: 1366, height: 768 }]);
    await go('#/keys');
    await page.getByRole('status').filter({ hasText: 'needs the admin role' }).waitFor();
    expect(await page.locator('main form, main table').count()).to.equal(0);
    await signOut();
  });

  it("an operator is offered the camera's actions and the jobs, and no admin page", async () => {
    await signIn(page, svc.url, OPERATOR.name, OPERATOR.password);
    expect(await page.locator('.topbar .user').innerText()).to.include(OPERATOR.name).and.include('Operator');
    expect(await navLinks()).to.deep.equal(['Cameras', 'Jobs', 'Run a job']);
    await openCamera(ALARMED);
    const offered = await enabledButtons();
    for (const action of CAMERA_ACTIONS) expect(offered, action).to.include(action);
    await openCamera(STREAMED);
    await page.getByRole('button', { name: 'Save source' }).waitFor();
    const offeredWithSource = await enabledButtons();
    for (const action of SOURCE_ACTIONS) expect(offeredWithSource, action).to.include(action);
    await go('#/upload/kamcheck');
    await page.getByRole('button', { name: 'Run the check' }).waitFor();
    await go('#/users');
    await page.getByRole('status').filter({ hasText: 'needs the admin role' }).waitFor();
    await signOut();
  });

  it('an admin creates a viewer key: its secret is shown once, works with the API, is gone after a reload, and stops working once revoked', async () => {
    await signIn(page, svc.url, USER, PASSWORD);
    expect(await page.locator('.topbar .user').innerText()).to.include('Admin');
    expect(await navLinks()).to.deep.equal(['Cameras', 'Jobs', 'Run a job', 'Users', 'Keys', 'Audit']);
    await page.locator('.topbar nav').getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByText('No API keys yet').waitFor();

    await page.getByLabel('Name').fill('night shift VMS');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByLabel('Cameras (optional)').fill(ALARMED);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('The new API key');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).to.match(/^vaa_/);
    expect(await page.locator('.secret-card').innerText()).to.include('This is the only time the key is shown');
    await page.locator('tr[data-key]').first().waitFor();
    await screenshots(page, 'keys-secret');
    // the copy button puts it on the clipboard
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);

    const bearer = `Bearer ${secret}`;
    const read = await api(`${svc.url}/cameras`, { auth: bearer });
    expect(read.status).to.equal(200);
    expect(read.body.cameras.map((c: { camera: string }) => c.camera)).to.deep.equal([ALARMED]);
    expect((await api(`${svc.url}/cameras/${ALARMED}/acknowledge`, json('POST', { comment: null }, bearer))).status).to.equal(403);

    // the key's use is recorded by the side of the request
    for (let i = 0; (await api(`${svc.url}/keys`)).body.keys[0].last_used_at === null; i++) {
      expect(i, 'the key\'s use recorded').to.be.lessThan(40);
      await new Promise((r) => setTimeout(r, 50));
    }
    await page.reload();
    const row = page.locator('tr[data-key]', { hasText: 'night shift VMS' });
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[1]).to.equal('Viewer');
    expect(cells[2]).to.equal(ALARMED);
    expect(cells[3]).to.include(`by ${USER}`);
    expect(cells[4], 'expires').to.equal('never');
    expect(cells[5], 'last used').to.include('just now');
    expect(await page.content()).to.not.include(secret);
    expect(await page.locator('body').innerText()).to.not.include(secret.slice(0, 12));
    expect(await page.locator('.secret-card').count()).to.equal(0);
    await screenshots(page, 'keys');

    await row.getByRole('button', { name: 'Revoke night shift VMS' }).click();
    await page.getByRole('button', { name: 'Yes, revoke “night shift VMS”' }).click();
    await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
    await page.getByText('No API keys yet').waitFor();
    expect((await api(`${svc.url}/cameras`, { auth: bearer })).status).to.equal(401);
  });

  it('an admin adds a user who then signs in; a bad field and the last admin are refused in the appliance\'s words; a user is removed after a confirmation', async () => {
    await page.locator('.topbar nav').getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await page.locator(`tr[data-user="${OPERATOR.name}"]`).waitFor();

    provoked.push(/^\/users(\/[^/]+)?$/);
    const add = page.locator('form', { has: page.getByRole('button', { name: 'Add user' }) });
    await add.getByLabel('Name').fill('dora');
    await add.getByLabel('Password').fill('short');
    await add.getByLabel('Role').selectOption('operator');
    await add.getByLabel('Cameras (optional)').fill(ALARMED);
    await add.getByRole('button', { name: 'Add user' }).click();
    expect(await add.getByRole('alert').innerText()).to.include('"password"');
    await add.getByLabel('Password').fill('dora checks the lobby');
    await add.getByRole('button', { name: 'Add user' }).click();
    await add.getByRole('status').filter({ hasText: 'dora is added as operator of lobby-4' }).waitFor();
    await page.locator('tr[data-user="dora"]').waitFor();
    const dora = (await api(`${svc.url}/users`)).body.users.find((u: { name: string }) => u.name === 'dora');
    expect(dora).to.include({ role: 'operator' });
    expect(dora.cameras).to.deep.equal([ALARMED]);

    // The last admin of all cameras stays one: the page shows the appliance's 409.
    const refusal = await api(`${svc.url}/users/${USER}`, json('PUT', { role: 'operator' }));
    expect(refusal.status).to.equal(409);
    const me = page.locator(`tr[data-user="${USER}"]`);
    expect(await me.innerText()).to.include('(you)');
    await me.getByRole('button', { name: `Change ${USER}` }).click();
    const change = page.getByRole('form', { name: `Change ${USER}` });
    await change.getByLabel('Role').selectOption('operator');
    await change.getByRole('button', { name: 'Save changes' }).click();
    expect(await change.getByRole('alert').innerText()).to.include(refusal.body.error.message);
    await screenshots(page, 'users-refused', [{ width: 1366, height: 768 }]);
    await change.getByRole('button', { name: 'Cancel' }).click();

    // A change sends only what changed: here the cameras, to all of them.
    await page.getByRole('button', { name: 'Change dora' }).click();
    const changeDora = page.getByRole('form', { name: 'Change dora' });
    await changeDora.getByLabel('Cameras').fill('');
    await changeDora.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'dora is changed: cameras.' }).waitFor();
    expect((await api(`${svc.url}/users`)).body.users.find((u: { name: string }) => u.name === 'dora').cameras).to.equal(null);

    await page.getByRole('button', { name: `Remove ${OPERATOR.name}` }).click();
    await page.getByRole('button', { name: `Yes, remove ${OPERATOR.name}` }).click();
    await page.getByRole('status').filter({ hasText: `${OPERATOR.name} is removed.` }).waitFor();
    await page.locator(`tr[data-user="${OPERATOR.name}"]`).waitFor({ state: 'detached' });
    expect((await api(`${svc.url}/session`, { ...json('POST', { user: OPERATOR.name, password: OPERATOR.password }), auth: null })).status).to.equal(401);
    await screenshots(page, 'users');

    // The new user signs in, in a browser of its own.
    const second = await launchBrowser();
    try {
      await signIn(second.page, svc.url, 'dora', 'dora checks the lobby');
      expect(await second.page.locator('.topbar .user').innerText()).to.include('dora').and.include('Operator');
      expect(second.errors).to.deep.equal([]);
    } finally {
      await second.close();
    }
  });

  it('the audit trail lists the user and the key created, with what they were, and filters by target', async () => {
    await page.locator('.topbar nav').getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    const created = page.locator('tr[data-action="user.created"]', { hasText: 'user:dora' });
    await created.waitFor();
    expect(await created.innerText()).to.include('User added').and.include(USER).and.include('role: operator').and.include(`cameras: ${ALARMED}`);
    const key = page.locator('tr[data-action="key.created"]');
    expect(await key.innerText()).to.include('Key created').and.include('name: night shift VMS').and.include('role: viewer');
    expect(await page.locator('tr[data-action="key.revoked"]').count()).to.equal(1);
    expect(await page.locator('tr[data-action="user.changed"]', { hasText: 'user:dora' }).innerText()).to.include(`cameras: ${ALARMED} → all`);
    expect(await page.locator('tr[data-action="user.deleted"]').innerText()).to.include(`user:${OPERATOR.name}`);
    // Newest first.
    const actions = await page.locator('tr[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions.indexOf('user.deleted')).to.be.lessThan(actions.indexOf('user.created'));
    expect(actions.indexOf('key.revoked')).to.be.lessThan(actions.indexOf('key.created'));
    await screenshots(page, 'audit');

    await created.getByRole('button', { name: 'user:dora' }).click();
    await page.locator('tr[data-action]').first().waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('tr[data-action]')].every((r) => r.textContent?.includes('user:dora')));
    expect(await page.getByLabel('Target').inputValue()).to.equal('user:dora');
    // her sign-in, her change and her creation, newest first
    expect(await page.locator('tr[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')))).to.deep.equal(['sign_in.succeeded', 'user.changed', 'user.created']);
    await screenshots(page, 'audit-filtered', [{ width: 1366, height: 768 }]);

    // More than a page: 50 a page, the older ones a click away.
    for (let i = 0; i < 40; i++) expect((await api(`${svc.url}/users/${VIEWER.name}`, json('PUT', { role: 'viewer' }))).status).to.equal(200);
    const total = (await api(`${svc.url}/audit?per_page=1`)).body.total as number;
    expect(total).to.be.greaterThan(50);
    await page.getByRole('button', { name: 'Show all' }).click();
    await page.getByText(`Events 1–50 of ${total}`).waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-action]').count()).to.equal(50);
    await page.getByRole('button', { name: 'Older ›' }).click();
    await page.getByText(`Events 51–${total} of ${total}`).waitFor();
    expect(await page.locator('tr[data-action]').count()).to.equal(total - 50);
    // the oldest event of all: the admin's first request
    expect(await page.locator('tr[data-action]').last().innerText()).to.include('Signed in').and.include(`user:${USER}`);
    expect(await page.getByRole('button', { name: 'Older ›' }).isDisabled()).to.equal(true);
  });

  it('loaded nothing from another origin, and no script failed', () => {
    const origin = new URL(svc.url).origin;
    expect(browser.requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin)).to.deep.equal([]);
    const unexpected = browser.errors.filter((e) => !(e.text.startsWith('Failed to load resource') && provoked.some((p) => p.test(new URL(e.url, origin).pathname))));
    expect(unexpected).to.deep.equal([]);
  });
});
