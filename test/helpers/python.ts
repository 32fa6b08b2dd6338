// Python clients in tests, as integrators write them: Debian's python3 with requests. The service
// under test runs in the test's own process, so the child is waited for without blocking the event
// loop, or the service could never answer it.
import { spawn } from 'node:child_process';

export interface PythonRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `/usr/bin/python3` with the script on stdin in `cwd`; killed after `timeoutMs`. */
export function runPython(script: string, env: Record<string, string>, cwd: string, timeoutMs = 120_000): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', ['-'], { env: { ...process.env, ...env }, cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill(), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(script);
  });
}

/** Runs the script; its last stdout line is JSON, returned parsed. Throws when python3 fails. */
export async function pythonJson(script: string, env: Record<string, string>, cwd: string, timeoutMs?: number): Promise<any> {
  const run = await runPython(script, env, cwd, timeoutMs);
  if (run.status !== 0) throw new Error(`python3 failed (${run.status}):\n${run.stderr}\n${run.stdout}`);
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}
