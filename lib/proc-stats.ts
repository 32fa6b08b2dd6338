// What Linux's /proc says about a process: the service's memory metrics and the benchmarks that
// watch its processes read it here.
// Every reader answers 0, '' or [] once the process has gone.
import fs from 'node:fs';

/** A `kB` field of /proc/<pid>/status (VmRSS, VmHWM, ...), in bytes. */
export function procStatus(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The command line, arguments separated by spaces. */
export function procCmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/**
 * Direct children, of every thread of the process: a child belongs to the thread that started it
 * (the ffmpeg processes of a face log to its worker's pipe thread, lib/video/pipe-thread.ts).
 */
export function procChildren(pid: number): number[] {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((task) => {
      try {
        return fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** Linux reports /proc CPU times in USER_HZ ticks, 100 a second on x86 and Arm. */
const TICK_MS = 1000 / 100;

/**
 * CPU time in ms: the process's own (utime + stime, all its threads) and that of its children it
 * has waited for (cutime + cstime: an exited ffmpeg counts once its parent has reaped it).
 */
export function procCpuMs(pid: number | 'self'): { own: number; children: number } {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { own: (Number(f[11]) + Number(f[12])) * TICK_MS, children: (Number(f[13]) + Number(f[14])) * TICK_MS };
  } catch {
    return { own: 0, children: 0 };
  }
}
