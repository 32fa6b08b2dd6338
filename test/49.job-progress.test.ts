// A running face log says how far it is in its task's `progress`: frames done of the video's
// frames, a percentage that only grows, and a time left once it ran a few seconds; a finished
// task has none; its page in Chromium shows a progress bar. Real video, real models, real HTTP
// polls.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api, form, PASSWORD, startTestService, USER, type TestService } from '../testkit/service.js';
import { MEDIA_DIR } from '../testkit/media.js';
import { launchBrowser, screenshots, signIn, type BrowserSession } from './helpers/browser.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { describeBackends } from './helpers/backends.js';

describeBackends('job progress', function (backend) {
  this.timeout(240_000);
  let svc: TestService;

  beforeEach(async () => {
    svc = await startTestService({ ...(await backend.env()) });
  });
  afterEach(async () => {
    await svc.stop();
  });

  it('a face log reports frames done of frames in all, a growing percentage and a time left, and no progress once complete', async () => {
    const { file, truth } = facelogVideo('reappear'); // 255 frames at 640x480: several seconds of work
    const res = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: file }) });
    expect(res.status).to.equal(200);
    const url = `${svc.url}/face_log/${res.body.task.job_id}`;
    const seen: any[] = [];
    let task: any;
    for (const until = Date.now() + 180_000; Date.now() < until; ) {
      task = (await api(url)).body.task;
      if (task.complete) break;
      if (task.progress) seen.push({ ...task.progress, message: task.message });
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(task.complete, 'the job finished').to.equal(true);
    expect(task.success, task.message).to.equal(true);
    expect(task).to.not.have.property('progress');
    expect(seen.length, 'progress seen while it ran').to.be.at.least(1);
    for (const p of seen) {
      expect(p.frames_total).to.equal(truth.frame_count);
      expect(p.frames_done).to.be.within(1, truth.frame_count);
      expect(p.percent).to.equal(Math.round((1000 * p.frames_done) / truth.frame_count) / 10);
      expect(p.eta_s === null || p.eta_s >= 0).to.equal(true);
    }
    const percents = seen.map((p) => p.percent);
    expect(percents).to.deep.equal([...percents].sort((a, b) => a - b));
    // the message keeps its text beside the structured field
    expect(seen.some((p) => /^Processing frame \d+ of \d+$/.test(p.message))).to.equal(true);
  });
});

describe('job progress in the console', function () {
  this.timeout(240_000);
  let svc: TestService;
  let browser: BrowserSession;

  before(async () => {
    svc = await startTestService({});
    browser = await launchBrowser();
    await signIn(browser.page, svc.url, USER, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('a running face log shows a progress bar with its frames on its page, gone once it is done', async () => {
    // the reappear video six times over (1530 frames): long enough to be seen running, and to have
    // counted frames for the time left, on a machine some times faster than this one
    const { file } = facelogVideo('reappear');
    const looped = path.join(MEDIA_DIR, 'reappear-x6.mp4');
    if (!fs.existsSync(looped)) execFileSync('ffmpeg', ['-y', '-v', 'error', '-stream_loop', '5', '-i', file, '-c', 'copy', looped]);
    const res = await api(`${svc.url}/face_log`, { method: 'POST', body: form({ video: looped }) });
    const jobId = res.body.task.job_id;
    const page = browser.page;
    await page.goto(`${svc.url}/#/face_log/${jobId}`);
    const bar = page.locator('.job-progress');
    await bar.waitFor({ timeout: 60_000 });
    expect(await bar.innerText()).to.match(/^\d+ of 1530 frames · [\d.]+%/);
    expect(Number(await bar.locator('progress').getAttribute('value'))).to.be.within(0, 100);
    // once it has counted frames for a few seconds: the time left
    await page.locator('.job-progress', { hasText: /about \d+ (s|min) left/ }).waitFor({ timeout: 60_000 });
    await screenshots(page, 'face-log-progress', [{ width: 1366, height: 768 }]);
    await page.locator('.job-progress').waitFor({ state: 'detached', timeout: 180_000 });
  });
});
