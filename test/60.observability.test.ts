// GET /healthz, GET /metrics and the job_id on every log line about a job, on both job stores;
// and the /proc readers behind the memory metrics and the benches' CPU figures.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { expect } from 'chai';
import pg from 'pg';
import type { ServiceOptions } from '../lib/service.js';
import { api, form, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { rejection, until } from './helpers/until.js';
import { describeBackends, sharedPostgres } from './helpers/backends.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';
import { procCpuMs, procStatus } from '../lib/proc-stats.js';

const MiB = 1024 * 1024;

/** `name{labels} value` lines of the Prometheus text format, keyed by `name{labels}`. */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}


/** Ends the connections to a database of the run's PostgreSQL server and drops it: the database is gone. */
async function dropDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: (await sharedPostgres()).url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

describeBackends('observability: health, metrics, logs', function (backend) {
  this.timeout(60_000);
  let media: TestMedia;
  let svc: TestService | undefined;
  /** DATABASE_URL of the service the test started last (PostgreSQL). */
  let databaseUrl: string | undefined;
  before(() => {
    media = testMedia();
  });
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  const start = async (env: Record<string, string> = {}, options?: ServiceOptions) => {
    const backendEnv = await backend.env();
    databaseUrl = backendEnv.DATABASE_URL;
    return startTestService({ ...backendEnv, ...env }, undefined, options);
  };

  it('GET /healthz answers 200 with the node, database, workers, queue and free disk', async () => {
    svc = await start({ WORKERS: '2', MIN_FREE_DISK_MB: '1' });
    const res = await api(`${svc.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const h = res.body.health;
    expect(res.body.status).to.equal('success');
    expect(h.healthy).to.equal(true);
    expect(h.service.up).to.equal(true);
    // Without NODE_ID a node is named by its host and port.
    expect(h.node).to.deep.equal({ id: `${os.hostname()}:${new URL(svc.url).port}`, backend: backend.name });
    expect(h.node.id).to.equal(svc.service.nodeId);
    expect(h.database).to.deep.equal({ ok: true });
    expect(h.workers).to.deep.include({ ok: true, alive: 2, configured: 2, restarts: 0 });
    expect(h.queue).to.deep.equal({ depth: 0, limit: 500, running: 0 });
    expect(h.disk.ok).to.equal(true);
    expect(h.disk.min_free_bytes).to.equal(1 * MiB);
    expect(h.disk.free_bytes).to.be.above(h.disk.min_free_bytes);
    expect((await api(`${svc.url}/healthz`, { auth: null })).status).to.equal(401);
  });

  it('GET /healthz answers 503 with the same body and a reason when the disk is below the floor or the database is gone', async () => {
    let free = 50 * MiB;
    svc = await start({ MIN_FREE_DISK_MB: '100' }, { diskSpace: async () => free });
    const low = await api(`${svc.url}/healthz`);
    expect(low.status).to.equal(503);
    expect(low.body.status).to.equal('error');
    expect(low.body.error.code).to.equal('unhealthy');
    expect(low.body.error.message).to.match(/MIN_FREE_DISK_MB \(50 MiB free, 100 MiB required\)/);
    expect(low.body.health).to.deep.include({ healthy: false });
    expect(low.body.health.disk).to.deep.equal({ ok: false, free_bytes: 50 * MiB, min_free_bytes: 100 * MiB });
    expect(low.body.health.database.ok).to.equal(true);

    free = 500 * MiB;
    expect((await api(`${svc.url}/healthz`)).status).to.equal(200);

    // The database is gone: on PostgreSQL it is dropped under the service; SQLite's file is closed.
    if (databaseUrl) await dropDatabase(databaseUrl);
    else await svc.service.db.close();
    const noDb = await api(`${svc.url}/healthz`);
    expect(noDb.status).to.equal(503);
    expect(noDb.body.health.database.ok).to.equal(false);
    expect(noDb.body.error.message).to.contain('database');
  });

  it('GET /metrics serves the node, jobs by analytic and state, processing times, queue depth, worker restarts and HTTP durations', async () => {
    svc = await start({ KAMCHECK_WAIT_MS: '20000', NODE_ID: 'metrics-node.1' });
    const done = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
    expect(done.body.task.success).to.equal(true);
    await api(`${svc.url}/kamcheck/${done.body.task.job_id}`);
    await api(`${svc.url}/kamcheck`, { auth: null }); // a 401

    // A killed worker is replaced and counted.
    const [worker] = svc.service.pool.pids;
    process.kill(worker, 'SIGKILL');
    // Ready, not just spawned: a process that has only just forked is a few MiB, not yet a worker.
    await until('the worker to be replaced', () => svc!.service.pool.restarts === 1 && svc!.service.pool.alive === 1 && svc!.service.pool.ready === 1);

    const res = await api(`${svc.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const m = parseMetrics(res.body);
    expect(m.get('vaa_node_info{node_id="metrics-node.1"}')).to.equal(1);
    expect([...m.keys()].filter((k) => k.startsWith('vaa_node_info'))).to.have.length(1);
    expect(m.get('vaa_jobs_running')).to.equal(0);
    expect(m.get('vaa_jobs{analytic="kamcheck",state="done"}')).to.equal(1);
    expect(m.get('vaa_jobs{analytic="kamcheck",state="failed"}')).to.equal(0);
    expect(m.get('vaa_jobs{analytic="face_log",state="queued"}')).to.equal(0);
    expect(m.get('vaa_job_processing_seconds_count{analytic="kamcheck",outcome="done"}')).to.equal(1);
    expect(m.get('vaa_job_processing_seconds_sum{analytic="kamcheck",outcome="done"}')).to.be.above(0);
    expect(m.get('vaa_queue_depth')).to.equal(0);
    expect(m.get('vaa_queue_limit')).to.equal(500);
    expect(m.get('vaa_workers_alive')).to.equal(1);
    expect(m.get('vaa_worker_restarts_total')).to.equal(1);
    expect(m.get('vaa_worker_max_resident_memory_bytes')).to.be.above(10 * MiB);
    expect(m.get('vaa_data_dir_free_bytes')).to.be.above(0);
    expect(m.get('vaa_http_request_duration_seconds_count{method="POST",route="/kamcheck",status="200"}')).to.equal(1);
    expect(m.get('vaa_http_request_duration_seconds_count{method="GET",route="/kamcheck/:jobId",status="200"}')).to.equal(1);
    expect(m.get('vaa_http_request_duration_seconds_count{method="GET",route="/kamcheck",status="401"}')).to.equal(1);
    expect(m.get('process_resident_memory_bytes')).to.be.above(10 * MiB);

    // Counters only grow; unknown paths share one route label.
    await api(`${svc.url}/no/such/${'x'.repeat(50)}`);
    const again = parseMetrics((await api(`${svc.url}/metrics`)).body);
    expect(again.get('vaa_worker_restarts_total')).to.equal(1);
    expect(again.get('vaa_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).to.equal(1);
    expect((await api(`${svc.url}/metrics`, { auth: null })).status).to.equal(401);
  });

  it('GET /metrics counts each periodic duty: its runs, its failures and their durations, from the start', async () => {
    svc = await start();
    const names = ['jobs.retention', 'sources.capture-files', 'cameras.reference-files', 'cameras.thumbnails', 'cameras.held-alarms', 'webhooks.outbox', 'sessions.expired', 'users.sign_ins', 'audit.retention'];
    expect(svc.service.duties.names.sort()).to.deep.equal([...names].sort());
    // The duties that run at start have run once by the time the first scrape sees them.
    const atStart = ['jobs.retention', 'cameras.reference-files', 'cameras.thumbnails', 'cameras.held-alarms', 'sessions.expired', 'users.sign_ins', 'audit.retention'];
    const first = await until('the duties run at start', async () => {
      const m = parseMetrics((await api(`${svc!.url}/metrics`)).body);
      return atStart.every((d) => m.get(`vaa_duty_runs_total{duty="${d}"}`) === 1) ? m : undefined;
    });
    for (const duty of names) {
      const runs = atStart.includes(duty) ? 1 : 0;
      expect(first.get(`vaa_duty_runs_total{duty="${duty}"}`), duty).to.equal(runs);
      expect(first.get(`vaa_duty_failures_total{duty="${duty}"}`), duty).to.equal(0);
      expect(first.get(`vaa_duty_duration_seconds_count{duty="${duty}"}`) ?? 0, duty).to.equal(runs);
    }
    // A duty that fails is counted as a run and as a failure: the database stops answering it.
    expect(await svc.service.duties.run('sources.capture-files')).to.deep.equal({ removed: 0 });
    const list = svc.service.sources.listedCaptureFiles;
    svc.service.sources.listedCaptureFiles = async () => {
      throw new Error('the table is gone');
    };
    try {
      expect((await rejection(svc.service.duties.run('sources.capture-files'))).message).to.equal('the table is gone');
    } finally {
      svc.service.sources.listedCaptureFiles = list;
    }
    const m = parseMetrics((await api(`${svc.url}/metrics`)).body);
    expect(m.get('vaa_duty_runs_total{duty="sources.capture-files"}')).to.equal(2);
    expect(m.get('vaa_duty_failures_total{duty="sources.capture-files"}')).to.equal(1);
    expect(m.get('vaa_duty_duration_seconds_count{duty="sources.capture-files"}')).to.equal(2);
    expect(svc.logs.some((l) => l.msg === 'duty failed' && l.duty === 'sources.capture-files')).to.equal(true);
  });

  it('GET /metrics counts webhook deliveries by event type and outcome, their durations, and the events pending', async () => {
    // The first event is refused until it is given up (a 4 s retry window); later ones are accepted.
    let refused = '';
    const hook = await WebhookReceiver.start((_n, req) => {
      refused ||= String(req.headers['x-event-id']);
      return req.headers['x-event-id'] === refused ? 500 : 200;
    });
    try {
      svc = await start({ KAMCHECK_WAIT_MS: '20000', WEBHOOK_URL: hook.url, WEBHOOK_BACKOFF_MS: '300', WEBHOOK_RETRY_HOURS: String(4 / 3600) });
      const scrape = async () => parseMetrics((await api(`${svc!.url}/metrics`)).body);
      const key = (name: string, outcome: string) => `${name}{event_type="job.completed",outcome="${outcome}"}`;
      const before = await scrape();
      for (const outcome of ['delivered', 'failed', 'gave_up']) {
        expect(before.get(key('vaa_webhook_deliveries_total', outcome))).to.equal(0);
        expect(before.get(`vaa_webhook_deliveries_total{event_type="camera.state_changed",outcome="${outcome}"}`)).to.equal(0);
      }
      expect(before.get('vaa_webhook_outbox_pending')).to.equal(0);

      await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      const failing = await until('a failed attempt, the event pending', async () => {
        const m = await scrape();
        return (m.get(key('vaa_webhook_deliveries_total', 'failed'))! >= 1 && m.get('vaa_webhook_outbox_pending') === 1) ? m : undefined;
      });
      expect(failing.get(key('vaa_webhook_deliveries_total', 'delivered'))).to.equal(0);
      const gaveUp = await until('the event given up', async () => {
        const m = await scrape();
        return m.get(key('vaa_webhook_deliveries_total', 'gave_up')) === 1 ? m : undefined;
      });
      expect(gaveUp.get('vaa_webhook_outbox_pending')).to.equal(0);

      await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      const m = await until('the next event delivered', async () => {
        const m = await scrape();
        return m.get(key('vaa_webhook_deliveries_total', 'delivered')) === 1 ? m : undefined;
      });
      const failed = m.get(key('vaa_webhook_deliveries_total', 'failed'))!;
      expect(failed).to.be.at.least(2); // 0.3 s, 0.6 s, 1.2 s ... within 4 s
      expect(hook.requests).to.have.length(failed + 2);
      expect(m.get('vaa_webhook_outbox_pending')).to.equal(0);
      for (const outcome of ['delivered', 'failed', 'gave_up']) {
        expect(m.get(key('vaa_webhook_delivery_duration_seconds_count', outcome))).to.equal(m.get(key('vaa_webhook_deliveries_total', outcome)));
      }
      expect(m.get(key('vaa_webhook_delivery_duration_seconds_sum', 'delivered'))).to.be.above(0);
    } finally {
      await hook.close();
    }
  });

  it('a job running on this node: /healthz queue.running and depth, /metrics vaa_jobs_running; 0 again once it is done', async () => {
    svc = await start({ KAMCHECK_WAIT_MS: '0' });
    const s = svc;
    const health = async () => (await api(`${s.url}/healthz`)).body.health;
    await until('the worker to be ready', () => s.service.pool.ready === 1);
    // A stopped worker holds the job it is handed for as long as the test looks.
    const [worker] = s.service.pool.pids;
    process.kill(worker, 'SIGSTOP');
    let id: string;
    try {
      const res = await api(`${s.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
      id = res.body.task.job_id;
      const running = await until('the job to run', async () => ((await health()).queue.running === 1 ? health() : undefined));
      expect(running.queue).to.deep.equal({ depth: 1, limit: 500, running: 1 });
      const m = parseMetrics((await api(`${s.url}/metrics`)).body);
      expect(m.get('vaa_jobs_running')).to.equal(1);
      expect(m.get('vaa_queue_depth')).to.equal(1);
      expect(m.get('vaa_jobs{analytic="kamcheck",state="processing"}')).to.equal(1);
    } finally {
      process.kill(worker, 'SIGCONT');
    }
    expect((await waitComplete(`${s.url}/kamcheck/${id}`)).success).to.equal(true);
    // The run ends a moment after the task shows complete (its uploads are removed first).
    const after = await until('the run to end', async () => ((await health()).queue.running === 0 ? health() : undefined));
    expect(after.queue).to.deep.equal({ depth: 0, limit: 500, running: 0 });
    expect(parseMetrics((await api(`${s.url}/metrics`)).body).get('vaa_jobs_running')).to.equal(0);
  });

  it('puts the job_id on every log line about a job: HTTP, queue, worker pool and worker process', async () => {
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'debug'; // the worker processes (and their replacements) inherit it
    try {
      await logJobs();
    } finally {
      if (level === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = level;
    }
  });

  async function logJobs(): Promise<void> {
    svc = await start({ KAMCHECK_WAIT_MS: '0' });
    const ok = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clip, image: media.reference }) });
    const okId = ok.body.task.job_id;
    await waitComplete(`${svc.url}/kamcheck/${okId}`);

    // A job whose worker dies under it: the pool's and the queue's lines carry its id too.
    const slow = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video: media.clipHd, image: media.referenceHd }) });
    const slowId = slow.body.task.job_id;
    await until('the job to start', async () => (await api(`${svc!.url}/kamcheck/${slowId}`)).body.task.message !== 'Queued');
    process.kill(svc.service.pool.pids[0], 'SIGKILL');
    await waitComplete(`${svc.url}/kamcheck/${slowId}`, 60_000);
    // A run logs 'job done' once it has removed the job's uploads, a moment after clients see the task complete.
    const logs = svc.logs;
    await until("the runs' last lines", () => [okId, slowId].every((id) => logs.some((l) => l.job_id === id && l.msg === 'job done')));

    for (const id of [okId, slowId]) {
      const about = svc.logs.filter((line) => JSON.stringify(line).includes(id));
      expect(about.length, `log lines about ${id}`).to.be.at.least(3);
      for (const line of about) expect(line.job_id, JSON.stringify(line)).to.equal(id);
      const messages = about.map((l) => l.msg);
      expect(messages).to.include('job accepted');
      expect(messages).to.include('job done');
      // Relayed from inside the worker process.
      expect(about.some((l) => l.msg === 'worker finished the job' && typeof l.worker_pid === 'number')).to.equal(true);
    }
    const slowLines = svc.logs.filter((l) => l.job_id === slowId).map((l) => l.msg);
    expect(slowLines).to.include('worker process ended (signal SIGKILL)');
    expect(slowLines).to.include('worker crashed; job queued again');
    expect(JSON.stringify(svc.logs)).to.not.contain('correct horse');
  }

  it('answers a method a path does not serve with 405 method_not_allowed and Allow', async () => {
    svc = await start();
    const del = await api(`${svc.url}/kamcheck`, { method: 'DELETE' });
    expect(del.status).to.equal(405);
    expect(del.body.error.code).to.equal('method_not_allowed');
    expect(del.headers.get('allow')).to.contain('POST').and.contain('GET');
    const put = await api(`${svc.url}/face_log`, { method: 'PUT' });
    expect(put.status).to.equal(405);
    expect(put.headers.get('allow')!.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
  });
});

/** JavaScript that keeps its process busy until it has had `ms` more of CPU (a loaded machine gives less CPU than wall time). */
const spinFor = (ms: number) => `const c = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; const e = c() + ${ms}; while (c() < e);`;

describe('/proc readers', () => {
  it('procCpuMs counts this process\'s CPU and, once reaped, its children\'s; procStatus its memory', () => {
    const before = procCpuMs('self');
    new Function(spinFor(300))(); // this process
    const child = spawnSync(process.execPath, ['-e', spinFor(300)]); // a child, waited for
    expect(child.status).to.equal(0);
    const after = procCpuMs('self');
    // /proc counts in 10 ms ticks.
    expect(after.own - before.own).to.be.within(250, 2000);
    expect(after.children - before.children).to.be.within(250, 2000);
    expect(procStatus(process.pid, 'VmRSS')).to.be.above(10 * MiB);
    expect(procCpuMs(2 ** 22 + 1)).to.deep.equal({ own: 0, children: 0 }); // no such process
  });
});
