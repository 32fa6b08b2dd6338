// Disk nearly full: uploads are refused with 507 insufficient_storage while DATA_DIR has less
// free space than MIN_FREE_DISK_MB, before the body is read and again after it. The disk-space
// probe is injected, so no disk is filled.
import fs from 'node:fs';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../lib/config.js';
import { AUTH, api, form, startTestService, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { checkRaw, httpRequest, rawConnect } from './helpers/raw-http.js';

const MiB = 1024 * 1024;

describe('disk nearly full', function () {
  this.timeout(60_000);
  let media: TestMedia;
  let svc: TestService | undefined;
  /** What the injected probe reports; `calls` counts its uses. */
  let free: number[];
  let calls: number;
  const probe = async () => {
    calls++;
    return free.length > 1 ? free.shift()! : free[0];
  };

  before(() => {
    media = testMedia();
  });
  beforeEach(() => {
    calls = 0;
  });
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  const start = () => startTestService({ MIN_FREE_DISK_MB: '100', KAMCHECK_WAIT_MS: '0' }, undefined, { diskSpace: probe });
  const post = (analytic: string, files: Record<string, string>) => api(`${svc!.url}/${analytic}`, { method: 'POST', body: form(files) });

  function expectRefused(res: { status: number; body: any }, message: RegExp): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(507);
    expect(res.body.status).to.equal('error');
    expect(res.body.error.code).to.equal('insufficient_storage');
    expect(res.body.error.message).to.match(message);
  }

  async function expectNothingKept(): Promise<void> {
    expect(await svc!.service.jobs.countsByState()).to.deep.equal([]);
    expect(fs.readdirSync(`${svc!.dataDir}/jobs`)).to.deep.equal([]);
    expect(fs.readdirSync(`${svc!.dataDir}/tmp`)).to.deep.equal([]);
  }

  it('refuses uploads with 507 while free space is below MIN_FREE_DISK_MB, and takes them again once there is room', async () => {
    free = [40 * MiB];
    svc = await start();
    const res = await post('kamcheck', { video: media.clip, image: media.reference });
    expectRefused(res, /disk is nearly full \(40 MiB free, 100 MiB must stay free\)/);
    expectRefused(await post('face_log', { video: media.clip }), /nearly full/);
    // GETs still work: the appliance serves its history while the disk is full.
    expect((await api(`${svc.url}/kamcheck`)).body.tasks).to.deep.equal([]);
    await expectNothingKept();

    free = [10_000 * MiB];
    const accepted = await post('kamcheck', { video: media.clip, image: media.reference });
    expect(accepted.status).to.equal(200);
  });

  it('refuses, before reading it, an upload whose declared length would take free space below the floor', async () => {
    free = [150 * MiB]; // room for 50 MiB
    svc = await start();
    // Declares 80 MiB and sends only the start: the answer must not wait for the rest.
    const boundary = 'b0undary';
    const { socket, response } = rawConnect(svc.url);
    const head = httpRequest('POST', '/kamcheck', [
      ['Host', 'appliance'],
      ['Authorization', AUTH],
      ['Content-Type', `multipart/form-data; boundary=${boundary}`],
      ['Content-Length', 80 * MiB],
    ]);
    socket.write(Buffer.concat([head, Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="video"; filename="a.mp4"\r\n\r\n`), Buffer.alloc(64 * 1024)]));
    const res = await response;
    socket.destroy();
    checkRaw(head, res);
    expectRefused(res, /not enough free disk space for an upload of 80 MiB: 150 MiB free, of which 100 MiB must stay free/);
    expect(res.headers.connection).to.equal('close');
    await expectNothingKept();
  });

  it('checks again after the body is on disk, and keeps nothing when the floor was crossed meanwhile', async () => {
    // Room before the upload (its declared length fits); below the floor once it is written.
    free = [10_000 * MiB, 90 * MiB];
    svc = await start();
    const res = await post('kamcheck', { video: media.clip, image: media.reference });
    expectRefused(res, /nearly full \(90 MiB free/);
    expect(calls).to.equal(2);
    await expectNothingKept();
  });

  it('reads MIN_FREE_DISK_MB as MiB, 1 GiB by default, and refuses nonsense', () => {
    expect(loadConfig({}).minFreeDiskBytes).to.equal(1024 * MiB);
    expect(loadConfig({ MIN_FREE_DISK_MB: '0' }).minFreeDiskBytes).to.equal(0);
    expect(loadConfig({ MIN_FREE_DISK_MB: '250' }).minFreeDiskBytes).to.equal(250 * MiB);
    expect(() => loadConfig({ MIN_FREE_DISK_MB: 'lots' })).to.throw(ConfigError, /MIN_FREE_DISK_MB/);
    expect(() => loadConfig({ MIN_FREE_DISK_MB: '-5' })).to.throw(ConfigError, /MIN_FREE_DISK_MB/);
  });
});
