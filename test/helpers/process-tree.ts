// The processes a process started, read from Linux's /proc: a test that kills a service notes its
// worker processes (and their ffmpeg children) first, then checks that none of them runs on.
import fs from 'node:fs';

/** A process as it was seen: its start time (clock ticks since boot) tells it from a later one that reuses the pid. */
export interface SeenProcess {
  pid: number;
  ppid: number;
  start: string;
  /** The program's name: its command line's first word, without the folder. */
  name: string;
  /** R, S, D, Z (exited, not yet reaped) ... */
  state: string;
}

/** /proc/<pid>/stat: `pid (comm) state ppid ... starttime` (the 22nd field); comm may hold spaces and parentheses. */
function readStat(pid: number): SeenProcess | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // The kernel's name (comm) is the main thread's, "MainThread" for node; the command line says "node".
  const argv0 = (() => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    } catch {
      return '';
    }
  })();
  const name = argv0 ? argv0.slice(argv0.lastIndexOf('/') + 1) : text.slice(text.indexOf('(') + 1, close);
  // fields[0] is the 3rd field (state), so the 22nd field is fields[19].
  return { pid, ppid: Number(fields[1]), start: fields[19], name, state: fields[0] };
}

function allProcesses(): SeenProcess[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((p): p is SeenProcess => p !== null);
}

/** Every process below `pid` (children, their children, ...), not `pid` itself. */
export function descendants(pid: number): SeenProcess[] {
  const byParent = new Map<number, SeenProcess[]>();
  for (const p of allProcesses()) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const found: SeenProcess[] = [];
  const visit = (parent: number) => {
    for (const child of byParent.get(parent) ?? []) {
      found.push(child);
      visit(child.pid);
    }
  };
  visit(pid);
  return found;
}

/** Those of `seen` that still run: same pid and start time, and not a zombie (exited, only unreaped). */
export function stillRunning(seen: SeenProcess[]): SeenProcess[] {
  return seen.filter((p) => {
    const now = readStat(p.pid);
    return now !== null && now.start === p.start && now.state !== 'Z';
  });
}
