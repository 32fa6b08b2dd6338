// opencv4nodejs's gaussianBlur pads a picture with black unless it is told a border, where OpenCV
// itself mirrors it: the blurred picture's rim fades to black, an edge every measurement then sees
// (a defocus bench found 35-39 of 220 defocused clips that way, 211 with the border mirrored). So
// every Gaussian blur of the service names its border, as a choice.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';

const LIB = fileURLToPath(new URL('../../lib', import.meta.url));

/** Each `.gaussianBlur(` call of `source` with its arguments, to its closing parenthesis. */
function gaussianBlurCalls(source: string): string[] {
  const calls: string[] = [];
  for (let at = source.indexOf('.gaussianBlur('); at >= 0; at = source.indexOf('.gaussianBlur(', at + 1)) {
    let depth = 0;
    let end = at + '.gaussianBlur'.length;
    do {
      if (source[end] === '(') depth++;
      else if (source[end] === ')') depth--;
      end++;
    } while (depth > 0 && end < source.length);
    calls.push(source.slice(at, end));
  }
  return calls;
}

describe('Gaussian blurs and the picture border', function () {
  it("opencv4nodejs's default pads with black, which is why the rule below exists", function () {
    const grey = new cv.Mat(20, 20, cv.CV_8UC1, 100);
    expect(grey.gaussianBlur(new cv.Size(0, 0), 2).at(0, 0)).to.be.below(50);
    expect(grey.gaussianBlur(new cv.Size(0, 0), 2, 2, cv.BORDER_REFLECT_101).at(0, 0)).to.equal(100);
  });

  it('every gaussianBlur in lib/ names its border', function () {
    const files = fs.readdirSync(LIB, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const found: string[] = [];
    const unnamed: string[] = [];
    for (const file of files) {
      for (const call of gaussianBlurCalls(fs.readFileSync(path.join(LIB, file), 'utf8'))) {
        found.push(call);
        if (!/cv\.BORDER_[A-Z0-9_]+\s*\)$/.test(call)) unnamed.push(`${file}: ${call}`);
      }
    }
    expect(found.length, 'the check finds the calls it looks at').to.be.at.least(3);
    expect(unnamed, unnamed.join('\n')).to.deep.equal([]);
  });
});
