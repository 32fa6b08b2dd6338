// What a worker process loads: the static import graph of the compiled worker entry
// (build/lib/worker.js), dynamic imports of a literal path included (the analytics' loadRunner).
// Workers run analytics only: no HTTP layer and no database driver, so neither lib/http/ nor
// koa, its router, its body parser, pg or better-sqlite3 may be reachable from there.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { analytics } from '../lib/analytics.js';
import { servedAnalytics } from '../lib/served-analytics.js';
import { chain as chainFrom, importGraph } from './helpers/import-graph.js';

const BUILD = fileURLToPath(new URL('..', import.meta.url));
const WORKER = path.join(BUILD, 'lib/worker.js');
const HTTP_DIR = path.join(BUILD, 'lib/http') + path.sep;
const FORBIDDEN_PACKAGES = ['koa', '@koa/router', 'koa-body', 'pg', 'better-sqlite3'];

describe('what a worker process loads', function () {
  const graph = importGraph([WORKER]);
  const chain = (g: typeof graph, file: string) => chainFrom(g, file, BUILD);
  const reached = (relative: string) => graph.files.has(path.join(BUILD, relative));

  it('reaches the analytics, their runners included (the walk follows imports)', () => {
    for (const file of ['lib/analytics.js', 'lib/jobs/worker-process.js', 'lib/kamcheck/analytic.js', 'lib/kamcheck/job.js', 'lib/kamcheck/run.js', 'lib/facelog/job.js']) {
      expect(reached(file), file).to.equal(true);
    }
    expect([...graph.packages.keys()]).to.include.members(['@u4/opencv4nodejs', 'pino']);
  });

  it('reaches no file of lib/http/', () => {
    const http = [...graph.files.keys()].filter((f) => f.startsWith(HTTP_DIR)).map((f) => chain(graph, f));
    expect(http).to.deep.equal([]);
  });

  it('reaches no HTTP or database package', () => {
    const found = FORBIDDEN_PACKAGES.filter((p) => graph.packages.has(p)).map((p) => `${p} <- ${chain(graph, graph.packages.get(p)!)}`);
    expect(found).to.deep.equal([]);
  });

  it('the HTTP layer serves routes for exactly the analytics the workers run', () => {
    expect(servedAnalytics.map((s) => s.analytic.name).sort()).to.deep.equal(analytics.names.sort());
    for (const served of servedAnalytics) expect(analytics.get(served.analytic.name), served.analytic.name).to.equal(served.analytic);
  });
});
