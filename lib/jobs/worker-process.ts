// Entry point of an analytics worker: a child process that runs one job at a time for the
// pool in the main process, talking over the IPC channel. OpenCV lives only here.
import { pino } from 'pino';
import { runners } from './runners.js';
import { AnalyticError } from './errors.js';
import type { WorkerRequest, WorkerReply } from './worker-protocol.js';

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

// Log records go over the IPC channel to the pool, which writes them with the service's logger:
// one stream of JSON lines, and tests capture a worker's lines like any other.
const logger = pino(
  { level: process.env.LOG_LEVEL || 'info', base: null, timestamp: false },
  { write: (line: string) => send({ type: 'log', record: JSON.parse(line) }) },
);

async function runJob(request: WorkerRequest): Promise<void> {
  const { jobId, analytic, input } = request;
  const log = logger.child({ job_id: jobId });
  const started = Date.now();
  log.debug({ analytic }, 'worker took the job');
  try {
    const load = runners[analytic];
    if (!load) throw new AnalyticError('unknown_analytic', `no analytic named ${analytic}`);
    const run = await load();
    const outcome = await run(input, (message) => send({ type: 'progress', jobId, message }), log);
    log.debug({ ms: Date.now() - started }, 'worker finished the job');
    send({ type: 'done', jobId, message: outcome.message, result: outcome.result });
  } catch (err) {
    const error = err as Error & { code?: unknown };
    if (isDiskFull(error)) {
      // Results could not be written: a clean failure with a plain message, not an internal error.
      log.error({ err: error }, 'disk full while writing results');
      send({ type: 'failed', jobId, code: 'insufficient_storage', message: 'the disk of the appliance is full; the results could not be written', expected: true });
    } else if (error instanceof AnalyticError) {
      send({ type: 'failed', jobId, code: error.code, message: error.message, expected: true });
    } else {
      send({
        type: 'failed',
        jobId,
        code: 'analytic_error',
        message: error?.message ?? String(err),
        stack: error?.stack,
        expected: false,
      });
    }
  }
}

function isDiskFull(err: Error & { code?: unknown; cause?: unknown }): boolean {
  return err?.code === 'ENOSPC' || (err?.cause as { code?: unknown } | undefined)?.code === 'ENOSPC';
}

process.on('message', (request: WorkerRequest) => {
  if (request?.type === 'run') void runJob(request);
});
// The pool is gone (service stopped or crashed): nothing left to work for.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready' });
