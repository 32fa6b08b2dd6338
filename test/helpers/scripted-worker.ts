// A worker process that misbehaves on request, for testing the pool and queue with real child
// processes: input.behaviour says what it does with a job.
import fs from 'node:fs';
import type { WorkerCancel, WorkerReply, WorkerRequest } from '../../lib/jobs/worker-protocol.js';

const send = (reply: WorkerReply) => process.send!(reply);

process.on('message', (req: WorkerRequest | WorkerCancel) => {
  if (req.type !== 'run') return; // a cancel: this worker never stops a job on request
  const { jobId } = req;
  const behaviour = String(req.input.behaviour);
  switch (behaviour) {
    case 'ok':
      send({ type: 'progress', jobId, message: 'Processing frame 1 of 1' });
      setTimeout(() => send({ type: 'done', jobId, outcome: { message: 'fine', result: { answer: 42, pid: process.pid } } }), 50);
      break;
    case 'crash':
      process.kill(process.pid, 'SIGSEGV');
      break;
    case 'crash_once': {
      const marker = String(req.input.marker);
      if (fs.existsSync(marker)) send({ type: 'done', jobId, outcome: { message: 'fine after a crash', result: {} } });
      else {
        fs.writeFileSync(marker, '');
        process.exit(70);
      }
      break;
    }
    case 'hang':
      break;
    case 'hang_after_progress':
      send({ type: 'progress', jobId, message: 'Processing frame 1 of 2' });
      break;
    case 'disk_full':
      send({ type: 'failed', jobId, code: 'insufficient_storage', message: 'the disk of the appliance is full', expose: true });
      break;
    case 'bad_input':
      send({ type: 'failed', jobId, code: 'decode_failed', message: 'cannot decode video clip.mp4', expose: true });
      break;
    case 'bug':
      send({ type: 'failed', jobId, code: 'analytic_error', message: 'x is undefined', stack: 'at y', expose: false });
      break;
  }
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
