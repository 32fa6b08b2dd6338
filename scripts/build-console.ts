// Bundles the operator console (console/) into build/console/ with esbuild: app.js (Preact and
// the pages, one ES module), app.css, the page and its icon. lib/console/pages.ts serves them.
// Run by `make build` after the type check of console/ (tsc -p console/tsconfig.json).
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const SOURCE = path.resolve('console');
const OUT = path.resolve(process.argv[2] ?? 'build/console');

/** Browsers of the last few years: what a control room and a tablet run. */
const TARGETS = ['chrome109', 'firefox115', 'safari16', 'edge109'];

async function main(): Promise<void> {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const common = { bundle: true, minify: true, target: TARGETS, logLevel: 'warning' as const, legalComments: 'eof' as const };
  await build({
    ...common,
    entryPoints: [path.join(SOURCE, 'src/main.tsx')],
    outfile: path.join(OUT, 'app.js'),
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(SOURCE, 'tsconfig.json'),
  });
  await build({ ...common, entryPoints: [path.join(SOURCE, 'src/console.css')], outfile: path.join(OUT, 'app.css') });
  for (const file of ['index.html', 'icon.svg']) fs.copyFileSync(path.join(SOURCE, file), path.join(OUT, file));
  const sizes = fs.readdirSync(OUT).map((f) => `${f} ${(fs.statSync(path.join(OUT, f)).size / 1024).toFixed(1)} KB`);
  console.log(`console bundled into ${path.relative(process.cwd(), OUT)}: ${sizes.join(', ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
