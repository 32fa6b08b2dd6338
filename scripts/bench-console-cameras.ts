// `make bench`: the console's cameras page at a site's scale, in Debian's chromium.
//
//   node build/scripts/bench-console-cameras.js [--cameras 1000]
//
// The service (SQLite, in this process) gets --cameras cameras with a 640x480 reference each
// (testkit/camera-fleet.ts; 1 in 40 in alarm, half of those acknowledged). Measured through the
// DevTools protocol (bytes as they crossed the wire, headers included):
// 1. first view: the console loaded with #/cameras, the browser's cache emptied, until the first
//    page's cards show and the pictures in view have loaded (thumbnails in place, as the service
//    makes them with each picture); three times;
// 2. the same with no thumbnail made yet (pictures of a release before them): ffmpeg makes each;
// 3. polls: two 5-second polls with nothing changed, then one after a change on the page;
// against the baseline of the page before it was paged: the whole list (GET /cameras) and every
// camera's full-size reference, which it downloaded on every first view.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { THUMBNAILS_DIR } from '../lib/data-files.js';
import type { CDPSession, Page } from 'playwright-core';
import { api, PASSWORD, startTestService, USER } from '../testkit/service.js';
import { fillFleet } from '../testkit/camera-fleet.js';
import { launchBrowser, signIn } from '../test/helpers/browser.js';
/** The console's page of cards (console/src/pages/cameras.tsx CAMERAS_PER_PAGE). */
const CAMERAS_PER_PAGE = 24;

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CAMERAS = option('cameras', 1000);
/** First views measured with thumbnails in place. */
const VIEWS = 3;

/** Bytes and requests the page moved while `during` ran. */
async function traffic(cdp: CDPSession, during: () => Promise<void>): Promise<{ bytes: number; requests: number; urls: string[] }> {
  const urls = new Map<string, string>();
  let bytes = 0;
  let requests = 0;
  // only requests this window sent: lazy pictures of an earlier one may still be finishing
  const sent = (e: { requestId: string; request: { url: string } }) => void urls.set(e.requestId, e.request.url);
  const done = (e: { requestId: string; encodedDataLength: number }) => {
    if (!urls.has(e.requestId)) return;
    bytes += e.encodedDataLength;
    requests++;
  };
  cdp.on('Network.requestWillBeSent', sent);
  cdp.on('Network.loadingFinished', done);
  await during();
  cdp.off('Network.requestWillBeSent', sent);
  cdp.off('Network.loadingFinished', done);
  return { bytes, requests, urls: [...urls.values()] };
}

/** Loads the console on the cameras page; resolves with ms until the first page of cards shows with the pictures in view loaded. */
async function firstView(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  const t0 = performance.now();
  await page.goto(`${url}/#/cameras`);
  await page.waitForFunction(
    (perPage) => {
      const cards = document.querySelectorAll('.camera-card');
      if (cards.length < perPage) return false;
      const inView = [...document.querySelectorAll<HTMLImageElement>('.camera-card img')].filter((img) => img.getBoundingClientRect().top < innerHeight);
      return inView.length > 0 && inView.every((img) => img.complete && img.naturalWidth > 0);
    },
    CAMERAS_PER_PAGE,
    { timeout: 60_000, polling: 20 },
  );
  return performance.now() - t0;
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;

async function main(): Promise<void> {
  const svc = await startTestService({});
  const browser = await launchBrowser();
  try {
    const t = performance.now();
    const fleet = await fillFleet(svc.service, svc.dataDir, CAMERAS);
    console.log(`${CAMERAS} cameras filled in ${((performance.now() - t) / 1000).toFixed(1)} s (${fleet.tampered.length} in alarm, ${fleet.acknowledged.length} acknowledged); references ${mb(fleet.referenceBytes)} together`);
    const whole = await fetch(`${svc.url}/cameras`, { headers: { authorization: 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64') } });
    const listBytes = (await whole.arrayBuffer()).byteLength;
    const baseline = listBytes + fleet.referenceBytes;
    console.log(`baseline (the unpaged page): list ${kb(listBytes)} + every full-size reference ${mb(fleet.referenceBytes)} = ${mb(baseline)}`);

    const { page } = browser;
    await signIn(page, svc.url, USER, PASSWORD);
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    const view = async (label: string) => {
      await cdp.send('Network.clearBrowserCache');
      let ms = 0;
      const moved = await traffic(cdp, async () => {
        ms = await firstView(page, svc.url);
        // the cards below the fold that chromium's lazy loading fetches anyway belong to this view
        await page.waitForLoadState('networkidle');
      });
      const thumbs = moved.urls.filter((u) => u.includes('/thumbnail')).length;
      console.log(`first view, ${label}: ${ms.toFixed(0)} ms, ${mb(moved.bytes)} in ${moved.requests} requests (${thumbs} thumbnails); ${(moved.bytes / baseline).toFixed(4)}x the baseline's bytes`);
      if (process.env.BENCH_DEBUG) {
        const entries = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => `${e.startTime.toFixed(0)}+${e.duration.toFixed(0)} ${e.name.replace(location.origin, '').slice(0, 70)}`));
        console.log(entries.join('\n'));
      }
      return ms;
    };
    // the browser's cache emptied before each: what an operator's first visit costs
    for (let run = 1; run <= VIEWS; run++) await view(`run ${run} of ${VIEWS}`);
    // pictures of a release before thumbnails: each is made (by ffmpeg) on its first request
    fs.rmSync(path.join(svc.dataDir, THUMBNAILS_DIR), { recursive: true, force: true });
    await view('thumbnails not made yet');
    const idle = await traffic(cdp, () => page.waitForTimeout(11_000));
    console.log(`polls, nothing changed (11 s): ${kb(idle.bytes)} in ${idle.requests} requests`);
    if (process.env.BENCH_DEBUG) console.log(idle.urls.join('\n'));
    const shown = await page.locator('.camera-card').first().getAttribute('data-camera');
    const changed = await traffic(cdp, async () => {
      await api(`${svc.url}/cameras/${shown}/acknowledge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ comment: 'bench' }) });
      await page.locator(`.camera-card[data-camera="${shown}"] .ack:not(.ack-missing)`).first().waitFor({ timeout: 20_000 });
    });
    console.log(`poll after a change on the page: ${kb(changed.bytes)} in ${changed.requests} requests`);
  } finally {
    await browser.close();
    await svc.stop();
  }
}

await main();
