// Debian's chromium (installed by the Makefile) driven by playwright-core, which never fetches a
// browser of its own: a fresh profile per launch, every request and script error recorded, and
// screenshots saved as test artifacts (build/ is not committed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS_DIR = path.resolve('build/test-artifacts/console');
export const DESKTOP = { width: 1366, height: 768 };
export const TABLET = { width: 768, height: 1024 };

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Every URL the browser requested. */
  requests: string[];
  /** Console messages of type error and uncaught page errors. */
  errors: { text: string; url: string }[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<BrowserSession> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vaa-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: DESKTOP,
    env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  const requests: string[] = [];
  const errors: { text: string; url: string }[] = [];
  context.on('request', (r) => requests.push(r.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push({ text: m.text(), url: m.location().url ?? '' });
  });
  page.on('pageerror', (e) => errors.push({ text: `${e.name}: ${e.message}`, url: '' }));
  return {
    context,
    page,
    requests,
    errors,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The page at the control room's size and at a tablet's, saved as `<name>-<w>x<h>.png`. */
export async function screenshots(page: Page, name: string, sizes = [DESKTOP, TABLET]): Promise<void> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const size of sizes) {
    await page.setViewportSize(size);
    await page.evaluate(() => window.scrollTo(0, 0)); // the sticky top bar where an operator sees it
    await page.waitForTimeout(150); // layout settles
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}-${size.width}x${size.height}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/**
 * Scrolls through the page as an operator would, waits until every <img> has loaded, and returns
 * the sources that did not load. Without the scroll, a lazy picture near Chromium's loading
 * distance (1250 px below the view) is requested or not depending on how the cards' text wraps.
 */
export async function brokenImages(page: Page): Promise<string[]> {
  await page.evaluate(async () => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight) {
      window.scrollTo(0, y);
      await frame();
      await frame();
    }
    window.scrollTo(0, document.documentElement.scrollHeight);
    await frame();
    window.scrollTo(0, 0);
  });
  // One look at the page: an image the page adds between two looks is loading, not broken.
  const found = await page.waitForFunction(
    () => {
      const images = [...document.images];
      return images.every((i) => i.complete) && images.filter((i) => i.naturalWidth === 0).map((i) => i.currentSrc || i.src);
    },
    undefined,
    { timeout: 15_000 },
  );
  return (await found.jsonValue()) as string[];
}

/** Signs the page in through the console's form. */
export async function signIn(page: Page, url: string, user: string, password: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Cameras' }).waitFor();
}
