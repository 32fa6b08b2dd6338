// Camera checks across nodes: two service processes on one PostgreSQL and one DATA_DIR check four
// cameras of a real RTSP server every 10 s. Each due check is taken by exactly one node; after one
// node is killed with SIGKILL, the other goes on checking every camera, within one interval plus
// the job lease of the kill. A node killed in the middle of a capture leaves it to another once
// its hold runs out.
import { expect } from 'chai';
import pg from 'pg';
import { api, removeTempDir, spawnService, tempDataDir, USER, PASSWORD, type ServiceProcess } from '../testkit/service.js';
import { startRtspServer, type RtspServer } from '../testkit/rtsp-server.js';
import { streamFiles } from '../testkit/stream-fixtures.js';
import { newDatabaseUrl } from './helpers/backends.js';
import { descendants, stillRunning, type SeenProcess } from './helpers/process-tree.js';
import { until } from './helpers/until.js';

const CAMERAS = ['north', 'south', 'east', 'west'];
const INTERVAL_S = 10;
const LEASE_S = 3;

describe('camera stream sources across nodes', function () {
  this.timeout(180_000);
  let rtsp: RtspServer;
  let dataDir: string;
  let databaseUrl: string;
  let env: Record<string, string>;
  const procs: ServiceProcess[] = [];
  let killedTree: SeenProcess[] = [];

  const tasksOf = async (url: string) => {
    const tasks = (await api(`${url}/kamcheck/1/100`)).body.tasks as any[];
    return tasks.filter((t) => t.stream_check?.trigger === 'schedule');
  };

  before(async () => {
    const media = await streamFiles();
    rtsp = await startRtspServer({ mounts: { ...Object.fromEntries(CAMERAS.map((c) => [c, media.normal])), stuck: media.normal } });
    dataDir = tempDataDir();
    databaseUrl = await newDatabaseUrl();
    env = {
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      AUTH_CREDENTIALS: `${USER}:${PASSWORD}`,
      WORKERS: '1',
      JOB_LEASE_S: String(LEASE_S),
      SOURCE_TIMEOUT_S: '3',
      LOG_LEVEL: 'warn',
    };
    for (const id of ['node-a', 'node-b']) procs.push(await spawnService({ ...env, NODE_ID: id }));
  });

  after(async () => {
    for (const p of procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      p.child.kill('SIGTERM');
    }
    await Promise.all(procs.map((p) => p.exited));
    for (const p of stillRunning(killedTree)) process.kill(p.pid, 'SIGKILL');
    await rtsp?.stop();
    if (dataDir) removeTempDir(dataDir);
  });

  it('takes each due check once, and goes on checking every camera after a node is killed', async () => {
    const [a, b] = procs;
    for (const camera of CAMERAS) {
      const res = await api(`${a.url}/cameras/${camera}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ source_url: rtsp.url(camera), check_interval_s: INTERVAL_S }),
      });
      expect(res.status).to.equal(200);
    }
    const finishedPerCamera = async (url: string, since = 0) => {
      const tasks = (await tasksOf(url)).filter((t) => t.complete && Date.parse(t.stream_check.due_at) >= since);
      return CAMERAS.map((c) => tasks.filter((t) => t.camera === c).length);
    };
    await until('two checks of every camera', async () => (await finishedPerCamera(b.url)).every((n) => n >= 2) || undefined, 40_000);

    // The kill: node A and its workers, at once.
    killedTree = descendants(a.child.pid!);
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await a.exited;
    // Every camera is checked again within an interval plus the lease of the kill, then on schedule.
    const firstAfter = await until(
      'a check of every camera after the kill',
      async () => {
        const tasks = (await tasksOf(b.url)).filter((t) => t.complete && Date.parse(t.finish_time) >= killedAt - 1000);
        const firsts = CAMERAS.map((c) => tasks.filter((t) => t.camera === c).at(-1));
        return firsts.every(Boolean) ? firsts : undefined;
      },
      (INTERVAL_S + LEASE_S + 10) * 1000,
    );
    for (const t of firstAfter) expect(Date.parse(t.finish_time) - killedAt, `${t.camera}'s next check`).to.be.below((INTERVAL_S + LEASE_S + 5) * 1000);
    await until('two more checks of every camera', async () => (await finishedPerCamera(b.url, killedAt)).every((n) => n >= 2) || undefined, 3 * INTERVAL_S * 1000);

    // Exactly one check per camera and due time, due times one interval apart, all finished and successful.
    const tasks = await tasksOf(b.url);
    for (const camera of CAMERAS) {
      const due = tasks.filter((t) => t.camera === camera).map((t) => Date.parse(t.stream_check.due_at)).sort((x, y) => x - y);
      expect(new Set(due).size, `${camera}: no due time checked twice`).to.equal(due.length);
      for (let i = 1; i < due.length; i++) expect((due[i] - due[i - 1]) % (INTERVAL_S * 1000), `${camera}: the schedule keeps its phase`).to.equal(0);
      expect(due.length).to.be.at.least(4);
    }
    const unfinished = tasks.filter((t) => !t.complete && Date.parse(t.stream_check.due_at) < Date.now() - (INTERVAL_S + LEASE_S) * 1000);
    expect(unfinished, 'no check of the killed node left behind').to.deep.equal([]);
    expect(tasks.filter((t) => t.complete && !t.success).map((t) => t.error)).to.deep.equal([]);
  });

  it('a capture whose node dies is taken over by another node once its hold runs out', async () => {
    const b = procs[1];
    const c = await spawnService({ ...env, NODE_ID: 'node-c' });
    procs.push(c);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      // Only node C may take the first check (B is paused), and its capture hangs on a stalled stream.
      await rtsp.stall('stuck');
      b.child.kill('SIGSTOP');
      const put = await api(`${c.url}/cameras/stuck`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ source_url: rtsp.url('stuck'), check_interval_s: 3600 }),
      });
      b.child.kill('SIGCONT');
      expect(put.status).to.equal(200);
      const held = await until('node C holds the capture', async () => (await db.query('SELECT capture_due, capture_until FROM camera_sources WHERE camera = $1 AND capture_until IS NOT NULL', ['stuck'])).rows[0]);
      killedTree.push(...descendants(c.child.pid!));
      c.child.kill('SIGKILL');
      await c.exited;
      await rtsp.resume('stuck');
      // Node B takes it over after the hold, for the same due time, and the check completes.
      const task = await until(
        'the check of the dead node\'s capture',
        async () => (await tasksOf(b.url)).find((t) => t.camera === 'stuck' && t.complete),
        Number(held.capture_until) - Date.now() + 20_000,
      );
      expect(task.success, JSON.stringify(task)).to.equal(true);
      expect(Date.parse(task.stream_check.due_at)).to.equal(Math.floor(Number(held.capture_due) / 1000) * 1000);
      expect(Date.parse(task.finish_time)).to.be.at.least(Math.floor(Number(held.capture_until) / 1000) * 1000);
      expect((await tasksOf(b.url)).filter((t) => t.camera === 'stuck'), 'one check for the due time').to.have.length(1);
    } finally {
      await db.end();
    }
  });
});
