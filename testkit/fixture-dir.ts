// A generated fixture set's folder, emptied for a new draw. A folder that holds another draw
// (another set or seed) is left as it is: a held-out draw can take minutes to make, and a bench
// run without its --seed once replaced one with the calibration draw.
import fs from 'node:fs';
import path from 'node:path';

/** Empties `dir` for the `set` draw of `seed`; throws, touching nothing, when it holds another draw. */
export function emptyFixtureDir(dir: string, set: string, seed: number): void {
  const file = path.join(dir, 'manifest.json');
  if (fs.existsSync(file)) {
    const held = JSON.parse(fs.readFileSync(file, 'utf8')) as { set?: unknown; seed?: unknown };
    // a manifest of an older generator without these fields is replaced as before
    const otherSet = typeof held.set === 'string' && held.set !== set;
    const otherSeed = typeof held.seed === 'number' && held.seed !== seed;
    if (otherSet || otherSeed) {
      throw new Error(`${dir} holds the ${String(held.set)} draw of seed ${String(held.seed)}, not the ${set} draw of seed ${seed}: pass --seed ${String(held.seed)}, or another directory`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
}
