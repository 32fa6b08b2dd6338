// The command line of the fixture generators (make-*-fixtures.ts):
//   [--set test|bench|...] [--seed N] [output dir]
// with `--set=...` and `--seed=...` spellings too. The sets are those the generator has a folder for.

export interface FixtureArgs<S extends string> {
  set: S;
  dir: string;
  seed?: number;
}

/** Throws on an unknown option or a bad value; the set defaults to test, the dir to `defaultDirs[set]`. */
export function parseFixtureArgs<S extends string>(argv: string[], defaultDirs: Record<'test' | S, string>): FixtureArgs<'test' | S> {
  const sets = Object.keys(defaultDirs) as Array<'test' | S>;
  let set: 'test' | S = 'test';
  let dir: string | undefined;
  let seed: number | undefined;
  const setValue = (v: string | undefined) => {
    const known = sets.find((k) => k === v);
    if (!known) throw new Error(`--set must be ${sets.join(' or ')}, got ${v}`);
    set = known;
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
