// The tamper check's accuracy bench leaves a fixture set of another draw as it is (the fixture
// generators' emptyFixtureDir, testkit/fixture-dir.ts): a held-out draw takes minutes to make, and
// a run without its --seed once regenerated it as the calibration draw.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { emptyFixtureDir } from '../testkit/fixture-dir.js';

const BENCH = fileURLToPath(new URL('../scripts/bench-kamcheck-accuracy.js', import.meta.url));
const run = promisify(execFile);

/** The bench's failure with `args` (its exit code and what it wrote to stderr); null when it succeeded. */
function failureOf(args: string[]): Promise<{ code: number; stderr: string } | null> {
  return run(process.execPath, [BENCH, ...args]).then(
    () => null,
    (e: { code: number; stderr: string }) => e,
  );
}

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
    const failed = await failureOf(['--kinds', 'black', dir]);
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
    const failed = await failureOf(['--kinds', 'black', '--seeds=7', dir]);
    expect(failed, 'the run should stop').to.not.equal(null);
    expect(failed!.stderr).to.include("Unknown option '--seeds'");
    expect(failed!.stderr).to.include('usage: bench-kamcheck-accuracy.js');
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it("empties a fixture folder for the same draw, and refuses one of another set or seed, face log's too", function () {
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ set: 'night', seed: 4, videos: [] }));
    fs.writeFileSync(path.join(dir, 'night-01-single-640x480.mp4'), 'a video');
    expect(() => emptyFixtureDir(dir, 'night', 3)).to.throw('--seed 4');
    expect(() => emptyFixtureDir(dir, 'bench', 4)).to.throw('holds the night draw of seed 4');
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['manifest.json', 'night-01-single-640x480.mp4']);
    emptyFixtureDir(dir, 'night', 4);
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });
});

