// The resident memory of a service's process tree (the service, its workers and their ffmpeg
// children), read from /proc every second: each process's peak (VmRSS, and VmHWM, the kernel's
// own peak, so spikes between two samples count too), and the largest worker's RSS over time.
import { procChildren, procCmdline, procStatus } from '../lib/proc-stats.js';

const SAMPLE_MS = 1000;

export type Kind = 'service' | 'worker' | 'ffmpeg decoder' | 'ffmpeg encoder' | 'ffprobe (upload checks)' | 'other';

/** Peak resident memory per process of the service's tree, sampled every second. */
export class TreeMemory {
  readonly peaks = new Map<number, { kind: Kind; peak: number }>();
  /** The largest worker RSS of each sample, for the course over the job. */
  readonly workerSeries: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly root: number) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
    this.sample();
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }

  peakOf(kind: Kind): { count: number; peak: number } {
    const list = [...this.peaks.values()].filter((p) => p.kind === kind);
    return { count: list.length, peak: Math.max(0, ...list.map((p) => p.peak)) };
  }

  private sample(): void {
    let worker = 0;
    const visit = (pid: number, kind: Kind) => {
      const rss = Math.max(procStatus(pid, 'VmRSS'), procStatus(pid, 'VmHWM'));
      if (rss > 0) {
        const known = this.peaks.get(pid);
        this.peaks.set(pid, { kind, peak: Math.max(known?.peak ?? 0, rss) });
      }
      if (kind === 'worker') worker = Math.max(worker, procStatus(pid, 'VmRSS'));
      for (const child of procChildren(pid)) visit(child, kindOf(child));
    };
    visit(this.root, 'service');
    this.workerSeries.push(worker);
  }
}

export function kindOf(pid: number): Kind {
  const cmd = procCmdline(pid);
  if (cmd.includes('lib/worker.js')) return 'worker';
  if (cmd.startsWith('ffprobe')) return 'ffprobe (upload checks)';
  if (cmd.startsWith('ffmpeg') && cmd.includes('libx264')) return 'ffmpeg encoder';
  if (cmd.startsWith('ffmpeg') && cmd.includes('pipe:1')) return 'ffmpeg decoder';
  return 'other';
}


/** The largest value of each tenth of `series` (a course over a run: flat means bounded). */
export function maxPerTenth(series: readonly number[]): number[] {
  return Array.from({ length: 10 }, (_, i) => Math.max(0, ...series.slice(Math.floor((i * series.length) / 10), Math.floor(((i + 1) * series.length) / 10))));
}

/** Issue 39's flatness: the last tenth's RSS at most FLAT_RATIO times the first's, the peak under FLAT_PEAK. */
const FLAT_RATIO = 1.1;
const FLAT_PEAK = 700 * 1024 * 1024;

/** The line a bench prints for a course of tenths (maxPerTenth) and its peak, in bytes. */
export function flatnessLine(tenths: readonly number[], peak: number): string {
  const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
  const flat = tenths[9] <= FLAT_RATIO * tenths[0] && peak < FLAT_PEAK;
  return `Last tenth / first tenth: ${(tenths[9] / tenths[0]).toFixed(3)}; peak ${mib(peak)} MiB; flat (<= ${FLAT_RATIO}, peak < ${mib(FLAT_PEAK)} MiB): ${flat ? 'yes' : 'no'}`;
}
