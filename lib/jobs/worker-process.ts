// Entry point of an analytics worker: a child process that runs one job at a time for the
// pool in the main process, talking over the IPC channel. OpenCV lives only here.
import { runners } from './runners.js';
import { AnalyticError } from './errors.js';
import type { WorkerRequest, WorkerReply } from './worker-protocol.js';

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

async function runJob(request: WorkerRequest): Promise<void> {
  const { jobId, analytic, input } = request;
  try {
    const load = runners[analytic];
    if (!load) throw new AnalyticError('unknown_analytic', `no analytic named ${analytic}`);
    const run = await load();
    const outcome = await run(input, (message) => send({ type: 'progress', jobId, message }));
    send({ type: 'done', jobId, message: outcome.message, result: outcome.result });
  } catch (err) {
    const error = err as Error & { code?: unknown };
    if (error instanceof AnalyticError) {
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

process.on('message', (request: WorkerRequest) => {
  if (request?.type === 'run') void runJob(request);
});
// The pool is gone (service stopped or crashed): nothing left to work for.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready' });
