// `make bench`: what a sign-in costs, and what the sign-in throttle lets through.
//
//   node build/scripts/bench-sign-in.js
//
// The service (SQLite, in this process, the default limits) answers GET /cameras:
// 1. with Basic credentials checked anew (a user's first request: one scrypt), 5 users;
// 2. the baseline: the same request with credentials checked in the last minutes (no hash), 50 times;
// 3. 2000 wrong passwords in a row from one address: how many were let through to the hash, and
//    how many attempts a second were answered (each with 401 or 429).
import { performance } from 'node:perf_hooks';
import { AUTH, startTestService } from '../testkit/service.js';

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(url: string, auth: string): Promise<{ ms: number; status: number }> {
  const start = performance.now();
  const res = await fetch(url, { headers: { authorization: auth } });
  await res.arrayBuffer();
  return { ms: performance.now() - start, status: res.status };
}

const svc = await startTestService({ WORKERS: '0', SIGN_IN_LIMIT_PER_ADDRESS: '', SIGN_IN_LIMIT_PER_USER: '' });
try {
  const url = `${svc.url}/cameras`;
  const cold: number[] = [];
  for (let i = 0; i < 5; i++) {
    const name = `bench-${i}`;
    const made = await fetch(`${svc.url}/users`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name, password: `password of ${name}`, role: 'viewer' }),
    });
    if (made.status !== 200) throw new Error(`cannot add a user: ${made.status}`);
    const r = await timed(url, basic(name, `password of ${name}`));
    if (r.status !== 200) throw new Error(`sign-in of ${name}: ${r.status}`);
    cold.push(r.ms);
  }
  const warm: number[] = [];
  for (let i = 0; i < 50; i++) warm.push((await timed(url, AUTH)).ms);
  console.log(`sign-in with a password hashed (scrypt): median ${median(cold).toFixed(1)} ms of 5`);
  console.log(`baseline, credentials checked before:   median ${median(warm).toFixed(1)} ms of 50`);
  console.log(`ratio: ${(median(cold) / median(warm)).toFixed(0)}x`);

  const statuses: Record<number, number> = {};
  const start = performance.now();
  for (let i = 0; i < 2000; i++) {
    const { status } = await timed(url, basic('tester', `guess ${i}`));
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  const seconds = (performance.now() - start) / 1000;
  console.log(
    `throttle: 2000 wrong passwords from one address in ${seconds.toFixed(1)} s (${(2000 / seconds).toFixed(0)} answered a second): ` +
      `${statuses[401] ?? 0} let through to the hash (401), ${statuses[429] ?? 0} refused before it (429)`,
  );
} finally {
  await svc.stop();
}
