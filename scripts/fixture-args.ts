// The command line of the fixture generators (make-*-fixtures.ts):
//   [--set test|bench] [--seed N] [output dir]
// with `--set=...` and `--seed=...` spellings too.

export type FixtureSet = 'test' | 'bench';

export interface FixtureArgs {
  set: FixtureSet;
  dir: string;
  seed?: number;
}

/** Throws on an unknown option or a bad value; the dir defaults to `defaultDirs[set]`. */
export function parseFixtureArgs(argv: string[], defaultDirs: Record<FixtureSet, string>): FixtureArgs {
  let set: FixtureSet = 'test';
  let dir: string | undefined;
  let seed: number | undefined;
  const setValue = (v: string | undefined) => {
    if (v !== 'test' && v !== 'bench') throw new Error(`--set must be test or bench, got ${v}`);
    set = v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--set') setValue(argv[++i]);
    else if (a.startsWith('--set=')) setValue(a.slice(6));
    else if (a === '--seed' || a.startsWith('--seed=')) {
      const v = a === '--seed' ? argv[++i] : a.slice(7);
      seed = Number(v);
      if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number, got ${v}`);
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else dir = a;
  }
  return { set, seed, dir: dir ?? defaultDirs[set] };
}
