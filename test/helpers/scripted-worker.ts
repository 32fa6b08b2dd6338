// A worker process that misbehaves on request, for testing the pool and queue with real child
// processes: input.behaviour says what it does with a job.
import fs from 'node:fs';
import type { WorkerReply, WorkerRequest } from '../../lib/jobs/worker-protocol.js';

const send = (reply: WorkerReply) => process.send!(reply);

process.on('message', (req: WorkerRequest) => {
  const { jobId } = req;
  const behaviour = String(req.input.behaviour);
  switch (behaviour) {
    case 'ok':
      send({ type: 'progress', jobId, message: 'Processing frame 1 of 1' });
      setTimeout(() => send({ type: 'done', jobId, message: 'fine', result: { answer: 42, pid: process.pid } }), 50);
      break;
    case 'crash':
      process.kill(process.pid, 'SIGSEGV');
      break;
    case 'crash_once': {
      const marker = String(req.input.marker);
      if (fs.existsSync(marker)) send({ type: 'done', jobId, message: 'fine after a crash', result: {} });
      else {
        fs.writeFileSync(marker, '');
        process.exit(70);
      }
      break;
    }
    case 'hang':
      break;
    case 'bad_input':
      send({ type: 'failed', jobId, code: 'decode_failed', message: 'cannot decode video clip.mp4', expected: true });
      break;
    case 'bug':
      send({ type: 'failed', jobId, code: 'analytic_error', message: 'x is undefined', stack: 'at y', expected: false });
      break;
  }
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
