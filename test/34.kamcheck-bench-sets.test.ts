// The tamper check's accuracy bench leaves a fixture set of another draw as it is: a held-out draw
// takes minutes to make, and a run without its --seed once regenerated it as the calibration draw.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const BENCH = fileURLToPath(new URL('../scripts/bench-kamcheck-accuracy.js', import.meta.url));
const run = promisify(execFile);

describe('bench-kamcheck-accuracy and the fixture sets it is given', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kamcheck-bench-sets-'));
  });

  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a directory that holds another seed's draw, and deletes nothing of it", async function () {
    const manifest = { set: 'bench', seed: 7, cases: [] };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    fs.mkdirSync(path.join(dir, 'bench-000-blur-320x240'));
    // --kinds black: were the set regenerated, 20 small cases would be, and the manifest's seed be 2
    const failed = await run(process.execPath, [BENCH, '--kinds', 'black', dir]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed, 'the run should stop').to.not.equal(null);
    expect(failed!.code).to.not.equal(0);
    expect(failed!.stderr).to.include('--seed 7');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'))).to.deep.equal(manifest);
    expect(fs.existsSync(path.join(dir, 'bench-000-blur-320x240'))).to.equal(true);
  });

  it('prints its usage for --help and refuses an option it does not know, generating nothing', async function () {
    // --kinds black: a run that ignored either would only make 20 small cases
    const help = await run(process.execPath, [BENCH, '--help', '--kinds', 'black', dir]);
    expect(help.stdout).to.match(/^usage: bench-kamcheck-accuracy\.js/);
    const failed = await run(process.execPath, [BENCH, '--kinds', 'black', '--seeds=7', dir]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed, 'the run should stop').to.not.equal(null);
    expect(failed!.stderr).to.include('unknown option --seeds=7');
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });
});
