// Order statistics: a typed array takes its own sort (stats.ts finiteSorted), which must give what
// an array of the same values gives.
import { expect } from 'chai';
import { median, quantile } from '../lib/stats.js';

describe('stats: quantiles of typed arrays and of arrays', () => {
  it('gives the same quantiles of a Float32Array, a Float64Array and an array, leaving out what is not finite', () => {
    const values = [3.5, -2, NaN, 7.25, Infinity, 0, -Infinity, 1.5, 1.5, -0.75, NaN, 12];
    for (const q of [0, 0.1, 0.25, 0.5, 0.9, 1]) {
      const plain = quantile(values, q);
      expect(quantile(Float64Array.from(values), q), `q ${q}`).to.equal(plain);
      expect(quantile(Float32Array.from(values), q), `q ${q}`).to.equal(plain);
    }
    expect(median(values)).to.equal(1.5);
    expect(median(Float32Array.from([4, 1, 3, 2]))).to.equal(2.5);
    expect(median(new Float32Array([NaN, Infinity, -Infinity]))).to.be.NaN;
    // the caller's array is not reordered
    const typed = Float32Array.from([3, 1, 2]);
    median(typed);
    expect(Array.from(typed)).to.deep.equal([3, 1, 2]);
  });
});
