// The cameras page at a site's scale, in Debian's chromium: 300 cameras, a page of cards at a
// time with unacknowledged alarms first and how long each has stood, small pictures only, search
// and paging, and a poll that moves no list when nothing on the page changed.
import { expect } from 'chai';
import type { CDPSession, Page } from 'playwright-core';
import { api, PASSWORD, startTestService, type TestService, USER } from '../testkit/service.js';
import { fillFleet, type Fleet } from '../testkit/camera-fleet.js';
import { brokenImages, launchBrowser, screenshots, signIn, type BrowserSession } from './helpers/browser.js';

const CAMERAS = 300;
const PER_PAGE = 24;

describe('operator console: the cameras page at a site\'s scale', function () {
  this.timeout(180_000);
  let svc: TestService;
  let browser: BrowserSession;
  let page: Page;
  let fleet: Fleet;
  let cdp: CDPSession;
  /** Status of every answer to GET /cameras?..., in order. */
  const listAnswers: number[] = [];

  before(async function () {
    this.timeout(120_000);
    svc = await startTestService({});
    fleet = await fillFleet(svc.service, svc.dataDir, CAMERAS, true, 20);
    browser = await launchBrowser();
    page = browser.page;
    cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    // the status on the wire (a revalidated answer reaches the page as the cached 200)
    const lists = new Set<string>();
    cdp.on('Network.requestWillBeSent', (e: { requestId: string; request: { url: string } }) => {
      if (new URL(e.request.url).pathname === '/cameras') lists.add(e.requestId);
    });
    cdp.on('Network.responseReceivedExtraInfo', (e: { requestId: string; statusCode: number }) => {
      if (lists.has(e.requestId)) listAnswers.push(e.statusCode);
    });
    await signIn(page, svc.url, USER, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('shows one page of cards, unacknowledged alarms first with how long they stood, with thumbnails only', async () => {
    const before = browser.requests.length;
    await page.goto('about:blank');
    await page.goto(`${svc.url}/#/cameras`);
    await page.locator('.camera-card').nth(PER_PAGE - 1).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.locator('.camera-card').count()).to.equal(PER_PAGE);
    const unacknowledged = fleet.tampered.filter((id) => !fleet.acknowledged.includes(id));
    const shown = await page.locator('.camera-card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-camera')));
    // the longest standing unacknowledged alarm first (the fleet's later cameras stood longer), then the acknowledged ones
    expect(shown.slice(0, unacknowledged.length)).to.deep.equal([...unacknowledged].reverse());
    expect(shown.slice(unacknowledged.length, fleet.tampered.length)).to.deep.equal([...fleet.acknowledged].reverse());
    const first = page.locator('.camera-card').first();
    expect(await first.innerText()).to.match(/Tampered for \d+ h \d+ min/).and.include('Not acknowledged');
    expect(await page.locator(`.camera-card[data-camera="${fleet.acknowledged[0]}"]`).innerText()).to.include('Acknowledged by fleet');
    expect(await page.locator('.chip[data-state="unacknowledged"]').innerText()).to.match(new RegExp(`Not acknowledged\\s*${unacknowledged.length}`));
    expect(await page.locator('.pager').innerText()).to.include(`Cameras 1–${PER_PAGE} of ${CAMERAS}`);
    // pictures: thumbnails of the cards on this page only, never a full-size reference
    const pictures = browser.requests.slice(before).filter((u) => /\/cameras\/[^/]+\/references\//.test(u));
    expect(pictures.length).to.be.within(1, PER_PAGE);
    expect(pictures.every((u) => new URL(u).pathname.endsWith('/thumbnail')), pictures.join('\n')).to.equal(true);
    expect(await brokenImages(page)).to.deep.equal([]);
    await screenshots(page, 'cameras-at-scale');
  });

  it('searches by id and pages; a poll of an unchanged page is a 304, a change on it shows', async () => {
    await page.getByPlaceholder('Search by camera id').fill('cam-02');
    await page.locator('.camera-card').first().waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('.camera-card')].every((c) => c.getAttribute('data-camera')!.startsWith('cam-02')));
    expect(await page.locator('.pager').innerText()).to.include('of 100');
    await page.getByRole('button', { name: 'Next ›' }).click();
    await page.locator('.pager', { hasText: `Cameras ${PER_PAGE + 1}–${2 * PER_PAGE} of 100` }).waitFor();
    await page.getByPlaceholder('Search by camera id').fill('');
    await page.locator('.pager', { hasText: `Cameras 1–${PER_PAGE} of ${CAMERAS}` }).waitFor();

    const answered = listAnswers.length;
    await page.waitForTimeout(11_000); // two polls
    const polls = listAnswers.slice(answered);
    expect(polls.length).to.be.at.least(2);
    expect(polls.every((s) => s === 304), JSON.stringify(polls)).to.equal(true);

    const target = fleet.tampered.find((id) => !fleet.acknowledged.includes(id))!;
    const ack = await api(`${svc.url}/cameras/${target}/acknowledge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ comment: 'on it' }) });
    expect(ack.status).to.equal(200);
    await page.locator(`.camera-card[data-camera="${target}"] .ack`, { hasText: `Acknowledged by ${USER}` }).waitFor({ timeout: 15_000 });
    expect(listAnswers.slice(answered)).to.include(200);
  });
});
