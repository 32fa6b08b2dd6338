// What a worker process loads: the static import graph of the compiled worker entry
// (build/lib/worker.js), dynamic imports of a literal path included (the analytics' loadRunner).
// Workers run analytics only: no HTTP layer and no database driver, so neither lib/http/ nor
// koa, its router, its body parser, pg or better-sqlite3 may be reachable from there.
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { analytics } from '../lib/analytics.js';
import { servedAnalytics } from '../lib/http/served-analytics.js';

const BUILD = fileURLToPath(new URL('..', import.meta.url));
const WORKER = path.join(BUILD, 'lib/worker.js');
const HTTP_DIR = path.join(BUILD, 'lib/http') + path.sep;
const FORBIDDEN_PACKAGES = ['koa', '@koa/router', 'koa-body', 'pg', 'better-sqlite3'];

/**
 * `import ... from '...'`, `import '...'` and `export ... from '...'`, the clause over several lines
 * too. tsc starts each such statement on a line of its own, so an import quoted in a comment (after
 * `//` or ` *`) is not taken for one.
 */
const STATIC_IMPORT = /^(?:import|export)\s*(?:[\w$*{},\s]*?\bfrom\s*)?['"]([^'"\n]+)['"]/gm;
/** `import('...')` of a literal path, anywhere: one quoted in a comment only adds to what is checked. */
const DYNAMIC_IMPORT = /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;

interface ImportGraph {
  /** Every compiled file reached, with the file that imports it (null for the entry). */
  files: Map<string, string | null>;
  /** Every package reached by a bare specifier, with the first file that imports it. */
  packages: Map<string, string>;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function resolveRelative(from: string, specifier: string): string {
  const target = path.resolve(path.dirname(from), specifier);
  const found = [target, `${target}.js`, path.join(target, 'index.js')].find((f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile());
  if (!found) throw new Error(`${path.relative(BUILD, from)} imports ${specifier}, which is not a file`);
  return found;
}

function importGraph(entry: string): ImportGraph {
  const graph: ImportGraph = { files: new Map([[entry, null]]), packages: new Map() };
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (!/\.[cm]?js$/.test(file)) continue; // JSON and other data files import nothing
    const code = fs.readFileSync(file, 'utf8');
    for (const match of [...code.matchAll(STATIC_IMPORT), ...code.matchAll(DYNAMIC_IMPORT)]) {
      const specifier = match[1];
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (graph.files.has(target)) continue;
        graph.files.set(target, file);
        pending.push(target);
      } else if (!isBuiltin(specifier)) {
        const name = packageName(specifier);
        if (!graph.packages.has(name)) graph.packages.set(name, file);
      }
    }
  }
  return graph;
}

/** How the entry reaches `file`: `lib/worker.js -> lib/analytics.js -> ...`. */
function chain(graph: ImportGraph, file: string): string {
  const steps: string[] = [];
  for (let f: string | null | undefined = file; f; f = graph.files.get(f)) steps.unshift(path.relative(BUILD, f));
  return steps.join(' -> ');
}

describe('what a worker process loads', function () {
  const graph = importGraph(WORKER);
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
