// The console's parts for cameras with stream sources (the `source` of a camera, the `offline`
// state, state changes, the source's settings, check now, re-baseline), against the real API and
// a real HTTP snapshot source.
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { api, form, PASSWORD, startTestService, type TestService, USER } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { brokenImages, launchBrowser, screenshots, signIn, type BrowserSession } from './helpers/browser.js';

describe('operator console: cameras with stream sources', function () {
  this.timeout(120_000);
  let media: TestMedia;
  let svc: TestService;
  let browser: BrowserSession;
  let page: Page;

  before(async function () {
    this.timeout(60_000);
    media = testMedia();
    svc = await startTestService({ KAMCHECK_WAIT_MS: '30000' });
    for (const camera of ['gate-1', 'dock-3']) {
      const res = await api(`${svc.url}/cameras/${camera}/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
      expect(res.status).to.equal(200);
    }
    await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip }, { camera: 'gate-1' }) });
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, svc.url, USER, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('with the appliance\'s stream sources: a camera that cannot be read turns offline, its source is edited, checked and re-baselined from the console', async function () {
    // A snapshot source on this machine: one JPEG over HTTP.
    const jpeg = fs.readFileSync(media.referenceNear);
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const snapshot = `http://127.0.0.1:${(server.address() as AddressInfo).port}/snapshot.jpg`;
    try {
      const put = await api(`${svc.url}/cameras/yard-9`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source_url: 'http://127.0.0.1:9/none.jpg', check_interval_s: 10, enabled: true }) });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      await page.goto(`${svc.url}/#/cameras`);
      await page.locator('.camera-card[data-camera="yard-9"][data-state="offline"]').waitFor({ timeout: 60_000 });
      await page.locator('.camera-card[data-camera="yard-9"] h2 a').click();
      await page.getByRole('heading', { name: 'Stream source' }).waitFor();
      await page.getByLabel('Stream URL').fill(snapshot);
      await page.getByLabel('Check every (seconds)').fill('30');
      await page.getByRole('button', { name: 'Save source' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect((await api(`${svc.url}/cameras/yard-9`)).body.camera.source.check_interval_s).to.equal(30);
      await page.getByRole('button', { name: 'Check now' }).click();
      await page.getByRole('status').filter({ hasText: 'A check of the stream is queued.' }).waitFor();
      await page.locator('button:has-text("Make the last capture the reference"):not([disabled])').waitFor({ timeout: 60_000 });
      await page.getByRole('button', { name: 'Make the last capture the reference' }).click();
      await page.getByRole('status').filter({ hasText: 'The last capture is the reference now.' }).waitFor();
      // The notice comes with the answer; the page shows the new reference once it has read the
      // camera again, and no picture of the page is broken then.
      const reference = (await api(`${svc.url}/cameras/yard-9`)).body.camera.references.flatMap((s: { references: { reference_id: string; origin: string }[] }) => s.references).find((r: { origin: string }) => r.origin === 'capture');
      expect(reference, 'a reference set from the capture').to.not.equal(undefined);
      await page.locator(`img[src*="/references/${reference.reference_id}?"]`).first().waitFor();
      expect(await brokenImages(page)).to.deep.equal([]);
      await screenshots(page, 'camera-with-real-source');
    } finally {
      server.close();
    }
  });

  it('loaded nothing from another origin, and no script failed', () => {
    const origin = new URL(svc.url).origin;
    expect(browser.requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin)).to.deep.equal([]);
    expect(browser.errors).to.deep.equal([]);
  });
});
