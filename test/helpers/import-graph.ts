// The static import graph of the project's own files, read from their text: what test/17 (what a
// worker process loads, from the compiled files) and test/19 (the modules' boundaries, from the
// TypeScript sources, type-only imports included) walk.
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';

/**
 * `import ... from '...'`, `import type ...`, `import '...'` and `export ... from '...'`, the clause
 * over several lines too. Each such statement starts a line of its own (tsc and the house style),
 * so an import quoted in a comment (after `//` or ` *`) is not taken for one.
 */
const STATIC_IMPORT = /^(?:import|export)\s*(?:type\s+)?(?:[\w$*{},\s]*?\bfrom\s*)?['"]([^'"\n]+)['"]/gm;
/** `import('...')` of a literal path, anywhere: one quoted in a comment only adds to what is checked. */
const DYNAMIC_IMPORT = /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;

export interface ImportGraph {
  /** Every file reached, with the file that first imports it (null for an entry). */
  files: Map<string, string | null>;
  /** Every package reached by a bare specifier, with the first file that imports it. */
  packages: Map<string, string>;
}

/** The specifiers `code` imports. */
export function importsOf(code: string): string[] {
  return [...code.matchAll(STATIC_IMPORT), ...code.matchAll(DYNAMIC_IMPORT)].map((m) => m[1]);
}

export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The file a relative specifier names: compiled `.js` as written, or its `.ts` source when `ts`. */
export function resolveRelative(from: string, specifier: string, ts = false): string {
  const target = path.resolve(path.dirname(from), ts ? specifier.replace(/\.js$/, '.ts') : specifier);
  const candidates = ts ? [target, `${target}.ts`, path.join(target, 'index.ts')] : [target, `${target}.js`, path.join(target, 'index.js')];
  const found = candidates.find((f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile());
  if (!found) throw new Error(`${from} imports ${specifier}, which is not a file`);
  return found;
}

/** Every file and package the entries reach, following relative imports. */
export function importGraph(entries: string[], ts = false): ImportGraph {
  const graph: ImportGraph = { files: new Map(entries.map((e) => [e, null])), packages: new Map() };
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (!/\.([cm]?js|ts)$/.test(file)) continue; // JSON and other data files import nothing
    for (const specifier of importsOf(fs.readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier, ts);
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

/** How the entry reaches `file`: `lib/worker.js -> lib/analytics.js -> ...`, relative to `root`. */
export function chain(graph: ImportGraph, file: string, root: string): string {
  const steps: string[] = [];
  for (let f: string | null | undefined = file; f; f = graph.files.get(f)) steps.unshift(path.relative(root, f));
  return steps.join(' -> ');
}
