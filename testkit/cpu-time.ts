// CPU time of a synchronous call, every thread of this process: what a bench compares where the
// machine's wall-clock speed drifts between runs.

/** Milliseconds of user and system CPU time that `fn` took. */
export function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
