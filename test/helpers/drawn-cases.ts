// A suite's few bench cases (testkit/kamcheck-fixtures/drawn.ts), drawn before its tests into a
// temporary folder that is removed after them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drawCases, type Draw, type DrawnCase } from '../../testkit/kamcheck-fixtures/drawn.js';

/** Registers the suite's before and after hooks; the returned function gives a drawn case by id (from the suite's tests on). */
export function drawnCasesForSuite(prefix: string, draws: readonly Draw[]): (id: string) => DrawnCase {
  let dir: string | undefined;
  let cases = new Map<string, DrawnCase>();
  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    cases = await drawCases(dir, draws);
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return (id) => {
    const c = cases.get(id);
    if (!c) throw new Error(`${id} was not drawn for this suite`);
    return c;
  };
}
