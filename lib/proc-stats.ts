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
