// Cause "black": no picture at all (signal lost, lens capped, lights out with no IR). Measurement:
// the brightness of the clip's brightest 1% (99th percentile grey level, median over frames). An
// under-exposed picture still has highlights; a black one has none.
import { median } from '../stats.js';
import { LumaStats } from './exposure.js';

export interface BlackMeasurement {
  /** 99th percentile grey level, 0..255. */
  brightest: number;
}

function percentile(stats: LumaStats, q: number): number {
  for (let v = 0; v < 256; v++) if (stats.cdf[v] >= q) return v;
  return 255;
}

export function measureBlack(frames: LumaStats[]): BlackMeasurement {
  return { brightest: median(frames.map((f) => percentile(f, 0.99))) };
}
