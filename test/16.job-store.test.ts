// The job store's contract (lib/jobs/store.ts), on both backends: records and history, claims
// and leases fenced by attempt, many claimers at once, events, exclusive duties and migrations.
import { expect } from 'chai';
import type { Claim, JobRecord } from '../lib/jobs/job-record.js';
import type { JobStore, StoreEvent } from '../lib/jobs/store.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import type { Database } from '../lib/db/database.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { rejection, sleep } from './helpers/until.js';

/** A lease that runs out during the test: SHORT_LEASE_MS, then LEASE_RUNS_OUT_MS of waiting. */
const SHORT_LEASE_MS = 50;
const LEASE_RUNS_OUT_MS = 200;
/** A lease that holds for the whole test. */
const LONG_LEASE_MS = 30_000;
/** Events arrive after the write (PostgreSQL: through the server); this is how long a test waits for one. */
const EVENT_WAIT_MS = 5000;

const claimOf = (job: JobRecord): Claim => ({ id: job.id, attempt: job.attempts });

/** Every event a store reports, in order, with a way to wait for the next ones. */
function record(store: JobStore): { events: StoreEvent[]; until(count: number): Promise<StoreEvent[]>; stop(): void } {
  const events: StoreEvent[] = [];
  const stop = store.subscribe((e) => events.push(e));
  return {
    events,
    stop,
    async until(count) {
      const deadline = Date.now() + EVENT_WAIT_MS;
      while (events.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${JSON.stringify(events)}`);
        await sleep(10);
      }
      return events;
    },
  };
}

function sorted<T>(rows: T[]): T[] {
  return [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describeBackends('job store', function (backend) {
  let dir: string;
  let store: JobStore;
  let db: Database;
  /** Every node's stores a test opened, closed after it. */
  let opened: TestStores[] = [];

  beforeEach(async () => {
    dir = tempDataDir();
    const stores = await backend.openStores(dir);
    ({ jobs: store, db } = stores);
    opened = [stores];
  });
  afterEach(async () => {
    for (const s of new Set(opened)) await s.close();
    removeTempDir(dir);
  });

  /** The job stores of `count` nodes on one database (PostgreSQL; on SQLite one store, `count` times). */
  async function openStores(count: number): Promise<JobStore[]> {
    return (await openNodes(count)).map((n) => n.jobs);
  }

  async function openNodes(count: number): Promise<TestStores[]> {
    const nodes = await backend.openNodes(dir, count);
    opened.push(...nodes);
    return nodes;
  }

  const insert = (id: string, analytic = 'kamcheck', createdAt = 1_000_000) => store.insert({ id, analytic, input: { n: id }, createdAt });

  describe('records and history', () => {
    it('insert returns the queued record that get reads back; an id is taken once', async () => {
      const input = { video: '/data/jobs/a/input/clip.mp4', names: { video: 'Lobby cam Åsa.mp4' }, maxFrames: 25, gender: true };
      const inserted = await store.insert({ id: 'a', analytic: 'face_log', input, createdAt: 1234 });
      expect(inserted).to.deep.equal({
        id: 'a',
        analytic: 'face_log',
        state: 'queued',
        attempts: 0,
        createdAt: 1234,
        finishedAt: null,
        message: 'Queued',
        input,
        result: null,
        error: null,
        report: null,
        startedAt: null,
        leaseOwner: null,
        progress: null,
      });
      expect(await store.get('a')).to.deep.equal(inserted);
      expect(await store.get('b')).to.equal(null);

      const before = Date.now();
      const now = await store.insert({ id: 'b', analytic: 'kamcheck', input: {} });
      expect(now.createdAt).to.be.within(before, Date.now());

      await rejection(store.insert({ id: 'a', analytic: 'kamcheck', input: { other: 1 } }));
      expect(await store.get('a')).to.deep.equal(inserted);
    });

    it('recent: one analytic, newest inserted first (created in the same millisecond too), paged by offset', async () => {
      for (let i = 1; i <= 7; i++) {
        await insert(`k${i}`, 'kamcheck');
        if (i % 2 === 0) await insert(`f${i / 2}`, 'face_log');
      }
      const ids = async (analytic: string, limit: number, offset?: number) => (await store.recent(analytic, limit, offset)).map((j) => j.id);
      expect(await ids('kamcheck', 3)).to.deep.equal(['k7', 'k6', 'k5']);
      expect(await ids('kamcheck', 3, 3)).to.deep.equal(['k4', 'k3', 'k2']);
      expect(await ids('kamcheck', 3, 6)).to.deep.equal(['k1']);
      expect(await ids('kamcheck', 3, 7)).to.deep.equal([]);
      expect(await ids('kamcheck', 100)).to.deep.equal(['k7', 'k6', 'k5', 'k4', 'k3', 'k2', 'k1']);
      expect(await ids('face_log', 10)).to.deep.equal(['f3', 'f2', 'f1']);
      expect(await ids('face_detect', 10)).to.deep.equal([]);
      // Whole records, as get has them.
      expect((await store.recent('face_log', 1, 1))[0]).to.deep.equal(await store.get('f2'));
    });

    it('recent: several analytics as one list, newest first, paged by offset', async () => {
      for (let i = 1; i <= 7; i++) {
        await insert(`k${i}`, 'kamcheck');
        if (i % 2 === 0) await insert(`f${i / 2}`, 'face_log');
        if (i % 3 === 0) await insert(`d${i / 3}`, 'face_detect');
      }
      const ids = async (analytics: string[], limit: number, offset?: number) => (await store.recent(analytics, limit, offset)).map((j) => j.id);
      const all = ['k7', 'd2', 'f3', 'k6', 'k5', 'f2', 'k4', 'd1', 'k3', 'f1', 'k2', 'k1'];
      expect(await ids(['kamcheck', 'face_log', 'face_detect'], 100)).to.deep.equal(all);
      expect(await ids(['face_detect', 'kamcheck', 'face_log'], 4)).to.deep.equal(all.slice(0, 4));
      expect(await ids(['kamcheck', 'face_log', 'face_detect'], 4, 4)).to.deep.equal(all.slice(4, 8));
      expect(await ids(['kamcheck', 'face_log', 'face_detect'], 4, 10)).to.deep.equal(all.slice(10));
      expect(await ids(['kamcheck', 'face_log', 'face_detect'], 4, 12)).to.deep.equal([]);
      expect(await ids(['face_log', 'face_detect'], 3, 1)).to.deep.equal(['f3', 'f2', 'd1']);
      expect(await ids(['face_log', 'face_log'], 10)).to.deep.equal(['f3', 'f2', 'f1']);
      expect(await ids(['face_log', 'nothing'], 10)).to.deep.equal(['f3', 'f2', 'f1']);
      expect(await ids([], 10)).to.deep.equal([]);
      expect((await store.recent(['face_log', 'face_detect'], 1, 1))[0]).to.deep.equal(await store.get('f3'));
    });

    it('countsByState by analytic and state, and unfinishedCount (queued and processing, on every node)', async () => {
      expect(await store.countsByState()).to.deep.equal([]);
      expect(await store.unfinishedCount()).to.equal(0);
      await insert('k1', 'kamcheck');
      await insert('f1', 'face_log');
      await insert('k2', 'kamcheck');
      await insert('f2', 'face_log');
      await insert('k3', 'kamcheck');
      expect(await store.unfinishedCount()).to.equal(5);
      const done = (await store.claim('n1', LONG_LEASE_MS))!;
      expect(await store.complete(claimOf(done), 'ok', {})).to.equal(true);
      const failed = (await store.claim('n1', LONG_LEASE_MS))!;
      expect(await store.fail(claimOf(failed), { code: 'decode_failed', message: 'no' })).to.equal(true);
      const running = (await store.claim('n2', LONG_LEASE_MS))!;
      expect([done.id, failed.id, running.id]).to.deep.equal(['k1', 'f1', 'k2']);
      expect(sorted(await store.countsByState())).to.deep.equal(
        sorted([
          { analytic: 'kamcheck', state: 'done', count: 1 },
          { analytic: 'face_log', state: 'failed', count: 1 },
          { analytic: 'kamcheck', state: 'processing', count: 1 },
          { analytic: 'kamcheck', state: 'queued', count: 1 },
          { analytic: 'face_log', state: 'queued', count: 1 },
        ]),
      );
      expect(await store.unfinishedCount()).to.equal(3);
    });
  });

  describe('claims and leases', () => {
    it('claim takes the oldest claimable job, counts the attempt, sets the lease owner and start; null when none is left', async () => {
      expect(await store.claim('n1', LONG_LEASE_MS)).to.equal(null);
      for (const id of ['a', 'b', 'c']) await insert(id);
      const before = Date.now();
      const a = (await store.claim('n1', LONG_LEASE_MS))!;
      const after = Date.now();
      expect(a).to.deep.include({ id: 'a', state: 'processing', attempts: 1, leaseOwner: 'n1', message: 'Processing', finishedAt: null, createdAt: 1_000_000 });
      // PostgreSQL stamps it with the database's clock: the same machine's here.
      expect(a.startedAt).to.be.within(before - 1000, after + 1000);
      expect(await store.get('a')).to.deep.equal(a);
      // Live leases: each claim takes the next job, and none is left after the last.
      expect((await store.claim('n2', LONG_LEASE_MS))!.id).to.equal('b');
      expect((await store.claim('n1', LONG_LEASE_MS))!.id).to.equal('c');
      expect(await store.claim('n3', LONG_LEASE_MS)).to.equal(null);
      expect((await store.get('a'))!.attempts).to.equal(1);
    });

    it('a live lease keeps a job from other claimers; once it ran out another owner claims it, attempt + 1, before younger jobs', async () => {
      for (const id of ['a', 'b', 'c']) await insert(id);
      expect((await store.claim('n1', LONG_LEASE_MS))!.id).to.equal('a');
      expect((await store.claim('n1', SHORT_LEASE_MS))!.id).to.equal('b');
      await sleep(LEASE_RUNS_OUT_MS);
      const b = (await store.claim('n2', LONG_LEASE_MS))!;
      expect(b).to.deep.include({ id: 'b', attempts: 2, leaseOwner: 'n2', state: 'processing' });
      const c = (await store.claim('n2', LONG_LEASE_MS))!;
      expect(c).to.deep.include({ id: 'c', attempts: 1 });
      expect(await store.claim('n3', LONG_LEASE_MS)).to.equal(null);
    });

    it('the attempt that lost its lease writes nothing: renew, setMessage, complete, fail and requeue; the new attempt completes once', async () => {
      await insert('x');
      const first = (await store.claim('n1', SHORT_LEASE_MS))!;
      const old = claimOf(first);
      await store.setMessage(old, 'Processing frame 1 of 25');
      expect((await store.get('x'))!.message).to.equal('Processing frame 1 of 25');
      await sleep(LEASE_RUNS_OUT_MS);
      const second = (await store.claim('n2', LONG_LEASE_MS))!;
      expect(second).to.deep.include({ id: 'x', attempts: 2, leaseOwner: 'n2', message: 'Processing' });
      const current = claimOf(second);

      const held = await store.get('x');
      expect(await store.renew(old, LONG_LEASE_MS)).to.equal(false);
      await store.setMessage(old, 'Processing frame 20 of 25');
      expect(await store.complete(old, 'late', { late: true })).to.equal(false);
      expect(await store.fail(old, { code: 'worker_crashed', message: 'late' })).to.equal(false);
      expect(await store.requeue(old, 'Queued again')).to.equal(false);
      expect(await store.get('x')).to.deep.equal(held);

      await store.setMessage(current, 'Processing frame 3 of 25');
      expect((await store.get('x'))!.message).to.equal('Processing frame 3 of 25');
      expect(await store.complete(current, 'Tampering probability 12%', { probability: 12 }, {}, 5_000_000)).to.equal(true);
      const done = await store.get('x');
      expect(done).to.deep.include({ state: 'done', attempts: 2, message: 'Tampering probability 12%', result: { probability: 12 }, error: null, finishedAt: 5_000_000, leaseOwner: 'n2' });
      // Recorded once: the same attempt's later writes change nothing, and a finished job is claimed by no one.
      expect(await store.complete(current, 'again', { probability: 99 }, {}, 6_000_000)).to.equal(false);
      expect(await store.fail(current, { code: 'internal_error', message: 'again' })).to.equal(false);
      expect(await store.requeue(current, 'Queued again')).to.equal(false);
      expect(await store.renew(current, LONG_LEASE_MS)).to.equal(false);
      await store.setMessage(current, 'Processing frame 4 of 25');
      expect(await store.get('x')).to.deep.equal(done);
      expect(await store.claim('n3', SHORT_LEASE_MS)).to.equal(null);
    });

    it('renew extends the lease, even one that ran out while nobody took the job', async () => {
      await insert('x');
      await insert('y');
      const x = (await store.claim('n1', SHORT_LEASE_MS))!;
      expect(await store.renew(claimOf(x), LONG_LEASE_MS)).to.equal(true);
      const y = (await store.claim('n1', SHORT_LEASE_MS))!;
      await sleep(LEASE_RUNS_OUT_MS);
      // x's renewed lease holds; y's ran out but nobody claimed it, so its attempt still holds it.
      expect(await store.renew(claimOf(y), LONG_LEASE_MS)).to.equal(true);
      expect(await store.claim('n2', LONG_LEASE_MS)).to.equal(null);
      expect(await store.get('y')).to.deep.include({ attempts: 1, leaseOwner: 'n1' });
    });

    it('fail records the failure, its message and any partial result', async () => {
      await insert('x');
      await insert('y');
      const x = (await store.claim('n1', LONG_LEASE_MS))!;
      expect(await store.fail(claimOf(x), { code: 'decode_failed', message: 'Cannot decode video clip.mp4' }, { frames_processed: 3 }, {}, 7_000_000)).to.equal(true);
      expect(await store.get('x')).to.deep.include({
        state: 'failed',
        message: 'Cannot decode video clip.mp4',
        error: { code: 'decode_failed', message: 'Cannot decode video clip.mp4' },
        result: { frames_processed: 3 },
        finishedAt: 7_000_000,
      });
      const y = (await store.claim('n1', LONG_LEASE_MS))!;
      expect(await store.fail(claimOf(y), { code: 'job_timeout', message: 'Processing took too long' })).to.equal(true);
      expect(await store.get('y')).to.deep.include({ state: 'failed', result: null });
      expect(await store.claim('n2', SHORT_LEASE_MS)).to.equal(null);
    });

    it('requeue puts the job back with its message, claimable at once by any owner', async () => {
      await insert('x');
      const first = (await store.claim('n1', LONG_LEASE_MS))!;
      expect(await store.requeue(claimOf(first), 'Queued again after a worker crash')).to.equal(true);
      expect(await store.get('x')).to.deep.include({ state: 'queued', attempts: 1, message: 'Queued again after a worker crash', leaseOwner: null });
      const second = (await store.claim('n2', LONG_LEASE_MS))!;
      expect(second).to.deep.include({ id: 'x', attempts: 2, leaseOwner: 'n2' });
      expect(await store.requeue(claimOf(first), 'late')).to.equal(false);
      expect((await store.get('x'))!.state).to.equal('processing');
    });

    it(
      backend.name === 'postgres'
        ? 'releaseLeases(owner) frees that owner\'s leases only: its jobs are claimable at once'
        : 'releaseLeases frees every lease: one box owns the file, so every lease was its own',
      async () => {
        for (const id of ['x', 'y', 'z', 'w']) await insert(id);
        const x = (await store.claim('n1', LONG_LEASE_MS))!;
        const y = (await store.claim('n2', LONG_LEASE_MS))!;
        const w = (await store.claim('n1', LONG_LEASE_MS))!;
        expect([x.id, y.id, w.id]).to.deep.equal(['x', 'y', 'z']);
        expect(await store.complete(claimOf(w), 'ok', {})).to.equal(true);
        expect(await store.releaseLeases('n3')).to.equal(backend.name === 'postgres' ? 0 : 2);
        expect(await store.releaseLeases('n1')).to.equal(backend.name === 'postgres' ? 1 : 2);
        const reclaimed: JobRecord[] = [];
        for (let job; (job = await store.claim('n4', LONG_LEASE_MS)); ) reclaimed.push(job);
        if (backend.name === 'postgres') {
          expect(reclaimed.map((j) => [j.id, j.attempts])).to.deep.equal([['x', 2], ['w', 1]]);
          expect(await store.get('y')).to.deep.include({ state: 'processing', attempts: 1, leaseOwner: 'n2' });
        } else {
          expect(reclaimed.map((j) => [j.id, j.attempts])).to.deep.equal([['x', 2], ['y', 2], ['w', 1]]);
        }
        // The finished job stays finished.
        expect(await store.get('z')).to.deep.include({ state: 'done', attempts: 1 });
      },
    );

    it('concurrent claimers on separate connections: every job is claimed exactly once', async () => {
      const JOBS = 300;
      const CLAIMERS = 8;
      const stores = await openStores(4);
      const ids = Array.from({ length: JOBS }, (_, i) => `job-${String(i).padStart(3, '0')}`);
      for (const id of ids) await stores[0].insert({ id, analytic: 'kamcheck', input: {} });
      const claims: { owner: string; id: string; attempt: number }[] = [];
      await Promise.all(
        Array.from({ length: CLAIMERS }, async (_, i) => {
          const s = stores[i % stores.length];
          const owner = `node-${i}`;
          for (let job; (job = await s.claim(owner, LONG_LEASE_MS)); ) {
            claims.push({ owner, id: job.id, attempt: job.attempts });
            expect(await s.complete(claimOf(job), 'ok', { by: owner })).to.equal(true);
          }
        }),
      );
      expect(claims).to.have.length(JOBS);
      expect(claims.map((c) => c.id).sort()).to.deep.equal(ids);
      expect(claims.every((c) => c.attempt === 1)).to.equal(true);
      expect(new Set(claims.map((c) => c.owner)).size, 'claimers that got a job').to.be.at.least(2);
      expect(await stores[1].countsByState()).to.deep.equal([{ analytic: 'kamcheck', state: 'done', count: JOBS }]);
      for (const c of claims.slice(0, 20)) expect((await stores[2].get(c.id))!.result).to.deep.equal({ by: c.owner });
    });
  });

  describe('events', () => {
    /** Until `listener` hears `writer`'s notifications (PostgreSQL: its LISTEN connection opens after open()). */
    async function hearing(writer: JobStore, listener: JobStore): Promise<void> {
      const heard = record(listener);
      try {
        for (let i = 0; heard.events.length === 0; i++) {
          if (i === 50) throw new Error('the listening store heard no notification in 5 s');
          await writer.insert({ id: `probe-${i}`, analytic: 'probe', input: {} });
          for (let t = 0; t < 10 && heard.events.length === 0; t++) await sleep(10);
        }
        // The probes leave no job claimable, and no notification of theirs still on its way.
        let last = '';
        for (let job; (job = await writer.claim('probe', LONG_LEASE_MS)); last = job.id) await writer.complete(claimOf(job), 'ok', {});
        while (!heard.events.some((e) => e.type === 'finished' && e.id === last)) await sleep(10);
      } finally {
        heard.stop();
      }
    }

    it(
      backend.name === 'postgres'
        ? 'another node hears queued on insert and requeue, finished with the id on complete and fail, nothing else'
        : 'subscribers hear queued on insert and requeue, finished with the id on complete and fail, nothing else',
      async () => {
        let writer = store;
        let listener = store;
        if (backend.name === 'postgres') {
          [writer, listener] = await openStores(2);
          await hearing(writer, listener);
        }
        const heard = record(listener);
        await writer.insert({ id: 'a', analytic: 'kamcheck', input: {} });
        let a = (await writer.claim('n1', LONG_LEASE_MS))!;
        await writer.setMessage(claimOf(a), 'Processing frame 1 of 2');
        await writer.renew(claimOf(a), LONG_LEASE_MS);
        await writer.requeue(claimOf(a), 'Queued again');
        a = (await writer.claim('n1', LONG_LEASE_MS))!;
        await writer.complete(claimOf(a), 'ok', {});
        await writer.insert({ id: 'b', analytic: 'face_log', input: {} });
        const b = (await writer.claim('n1', SHORT_LEASE_MS))!;
        await sleep(LEASE_RUNS_OUT_MS);
        const b2 = (await writer.claim('n2', LONG_LEASE_MS))!;
        // The attempt that lost its lease finishes nothing, so it announces nothing.
        expect(await writer.fail(claimOf(b), { code: 'worker_crashed', message: 'late' })).to.equal(false);
        expect(await writer.fail(claimOf(b2), { code: 'decode_failed', message: 'no' })).to.equal(true);
        const expected: StoreEvent[] = [{ type: 'queued' }, { type: 'queued' }, { type: 'finished', id: 'a' }, { type: 'queued' }, { type: 'finished', id: 'b' }];
        await heard.until(expected.length);
        // Anything more would arrive with the next event: one more, heard by a second subscriber.
        const control = record(listener);
        await writer.insert({ id: 'c', analytic: 'kamcheck', input: {} });
        await control.until(1);
        expect(heard.events).to.deep.equal([...expected, { type: 'queued' }]);

        // Unsubscribed: the next event reaches the other subscriber only.
        heard.stop();
        const c = (await writer.claim('n1', LONG_LEASE_MS))!;
        await writer.complete(claimOf(c), 'ok', {});
        await control.until(2);
        expect(control.events).to.deep.equal([{ type: 'queued' }, { type: 'finished', id: 'c' }]);
        expect(heard.events).to.have.length(expected.length + 1);
        control.stop();
      },
    );
  });

  describe('exclusive duties', () => {
    if (backend.name === 'postgres') {
      it('two nodes race for a duty: one runs it, the other gets false; once it is done another may run it', async () => {
        const [a, b] = await openNodes(2);
        const ran: string[] = [];
        const duty = (who: string) => async () => {
          ran.push(who);
          await sleep(300);
        };
        const results = await Promise.all([a.db.exclusive('retention', duty('a')), b.db.exclusive('retention', duty('b'))]);
        expect(ran).to.have.length(1);
        expect(results).to.deep.equal(ran[0] === 'a' ? [true, false] : [false, true]);

        // While a holds it, b is refused; a duty of another name runs beside it.
        let release!: () => void;
        const holding = a.db.exclusive('retention', () => new Promise<void>((r) => (release = r)));
        while (!release) await sleep(10);
        expect(await b.db.exclusive('retention', duty('b'))).to.equal(false);
        expect(await b.db.exclusive('other-duty', duty('b-other'))).to.equal(true);
        release();
        expect(await holding).to.equal(true);
        expect(await b.db.exclusive('retention', duty('b'))).to.equal(true);
        expect(ran.slice(1)).to.deep.equal(['b-other', 'b']);

        // A duty that throws lets go as well, and its error reaches the caller.
        const err = await rejection(a.db.exclusive('retention', async () => Promise.reject(new Error('sweep failed'))));
        expect(err.message).to.equal('sweep failed');
        expect(await b.db.exclusive('retention', duty('b'))).to.equal(true);
      });
    } else {
      it('one box runs the duty (its caller keeps it from running twice); a duty that throws reaches the caller', async () => {
        const ran: string[] = [];
        expect(await db.exclusive('retention', async () => void ran.push('sweep'))).to.equal(true);
        expect(ran).to.deep.equal(['sweep']);
        const err = await rejection(db.exclusive('retention', async () => Promise.reject(new Error('sweep failed'))));
        expect(err.message).to.equal('sweep failed');
      });
    }
  });
});
