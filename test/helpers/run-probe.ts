// Runs one of the probe scripts of test/helpers/ as a node child process and answers the JSON of
// its last line of output (each probe prints its measures there).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export async function runProbe<T>(name: string, args: string[], options: { execArgv: string[]; env?: NodeJS.ProcessEnv }): Promise<T> {
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [...options.execArgv, script, ...args], { env: options.env ?? process.env });
  return JSON.parse(stdout.trim().split('\n').pop()!) as T;
}
