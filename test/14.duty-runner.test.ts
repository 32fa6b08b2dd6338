// The duty runner (lib/duty-runner.ts) on both backends: a duty runs at start when it asks to,
// then on its interval; never twice at once on one node; on one node at a time when several
// share the database; its runs, failures and durations are counted; a stop tells a run under way
// to end at its next step and waits for it.
import { expect } from 'chai';
import { pino } from 'pino';
import { DutyRunner, type Duty, type DutyOutcome } from '../lib/duty-runner.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import { describeBackends, type TestStores } from './helpers/backends.js';
import { rejection, sleep, until } from './helpers/until.js';

const silent = pino({ level: 'silent' });

/** What the runner reported to its metrics. */
function recorder(): { seen: [string, DutyOutcome][]; observeDuty(name: string, outcome: DutyOutcome): void } {
  const seen: [string, DutyOutcome][] = [];
  return { seen, observeDuty: (name, outcome) => void seen.push([name, outcome]) };
}

describeBackends('duty runner', function (backend) {
  let dir: string;
  let nodes: TestStores[];
  const runners: DutyRunner[] = [];

  beforeEach(async () => {
    dir = tempDataDir();
    nodes = await backend.openNodes(dir, 2);
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    for (const n of new Set(nodes)) await n.close();
    removeTempDir(dir);
  });

  const runner = (duties: Duty[], node = nodes[0], metrics = recorder()) => {
    const r = new DutyRunner({ duties, exclusive: (name, task) => node.db.exclusive(name, task), logger: silent, metrics });
    runners.push(r);
    return { runner: r, metrics };
  };

  it('runs a duty at start and on its interval, counts each run, and a failure does not stop the next', async () => {
    let runs = 0;
    const { runner: r, metrics } = runner([
      {
        name: 'test.ticks',
        intervalMs: 100,
        atStart: true,
        run: async () => {
          runs++;
          if (runs === 2) throw new Error('the second run fails');
          return { runs };
        },
      },
      { name: 'test.later', intervalMs: 60_000, run: async () => ({ never: 1 }) },
    ]);
    r.start();
    await until('four runs', () => runs >= 4);
    await r.stop();
    const ticks = metrics.seen.filter(([name]) => name === 'test.ticks').map(([, outcome]) => outcome);
    expect(ticks.slice(0, 4)).to.deep.equal(['done', 'failed', 'done', 'done']);
    // A duty that does not run at start waits for its interval.
    expect(metrics.seen.some(([name]) => name === 'test.later')).to.equal(false);
  });

  it('never runs a duty twice at once on one node: a call while it runs joins that run', async () => {
    let running = 0;
    let most = 0;
    const { runner: r } = runner([
      {
        name: 'test.slow',
        intervalMs: 60_000,
        run: async () => {
          most = Math.max(most, ++running);
          await sleep(100);
          running--;
          return { done: 1 };
        },
      },
    ]);
    const runs = await Promise.all([r.run('test.slow'), r.run('test.slow'), r.run('test.slow')]);
    expect(most).to.equal(1);
    expect(runs).to.deep.equal([{ done: 1 }, { done: 1 }, { done: 1 }]);
    expect((await rejection(r.run('test.unknown'))).message).to.equal('no duty test.unknown');
  });

  it('a stop aborts a run under way at its next step and waits for it', async () => {
    let steps = 0;
    let ended = false;
    const { runner: r } = runner([
      {
        name: 'test.long',
        intervalMs: 60_000,
        atStart: true,
        run: async (signal) => {
          while (!signal.aborted) {
            steps++;
            await sleep(20);
          }
          await sleep(50); // the step under way ends
          ended = true;
        },
      },
    ]);
    r.start();
    await until('a few steps', () => steps >= 3);
    await r.stop();
    expect(ended).to.equal(true);
    // Stopped, it runs no more.
    expect(await r.run('test.long')).to.equal(null);
  });

  if (backend.name === 'postgres') {
    it('runs a duty on one node at a time: the other skips its turn', async () => {
      let running = 0;
      let ranOn: string[] = [];
      const duty = (node: string): Duty => ({
        name: 'test.shared',
        intervalMs: 60_000,
        run: async () => {
          expect(++running).to.equal(1);
          ranOn.push(node);
          await sleep(200);
          running--;
        },
      });
      const a = runner([duty('a')], nodes[0]);
      const b = runner([duty('b')], nodes[1]);
      const [onA, onB] = await Promise.all([a.runner.run('test.shared'), b.runner.run('test.shared')]);
      expect(ranOn).to.have.length(1);
      // The node that had its turn tells what it did; the other, null.
      expect([onA, onB].filter((r) => r === null)).to.have.length(1);
      // A turn the other node took is not counted as a run here.
      expect(a.metrics.seen.length + b.metrics.seen.length).to.equal(1);
      ranOn = [];
      expect(await b.runner.run('test.shared')).to.deep.equal({});
      expect(ranOn).to.deep.equal(['b']);
    });
  }
});
