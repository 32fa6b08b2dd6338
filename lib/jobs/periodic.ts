// Duties that run at start and then on a fixed interval (the retention sweeps).

/** Runs `duty` now and then every `intervalMs`, logging its failures with `onError`; returns a function that stops it. */
export function runNowAndEvery(intervalMs: number, duty: () => Promise<unknown>, onError: (err: unknown) => void): () => void {
  const run = () => void duty().catch(onError);
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
