// When the detector last looked at each part of the frame for motion there: a coarse grid of
// cells, each holding the number of the last detector run whose regions covered it. The scan
// schedule searches the stalest motion first, so that motion the budget left out in one run comes
// first in the next (a person appearing behind others would otherwise wait behind them for as long
// as they keep moving).
import type { Box } from '../types.js';

/** Cells along the frame's longer side (a 1080p cell is 60 px, two 30 px faces). */
const CELLS_LONG_SIDE = 32;

export class SearchAges {
  private readonly cols: number;
  private readonly rows: number;
  private readonly cell: number;
  /** Per cell, the run that last searched it (-1: none yet). */
  private readonly last: Int32Array;

  constructor(width: number, height: number) {
    this.cell = Math.max(width, height) / CELLS_LONG_SIDE;
    this.cols = Math.max(1, Math.ceil(width / this.cell));
    this.rows = Math.max(1, Math.ceil(height / this.cell));
    this.last = new Int32Array(this.cols * this.rows).fill(-1);
  }

  /** Runs since the stalest cell of `box` was searched, as of run `run`. */
  age(box: Box, run: number): number {
    let oldest = run;
    this.forCells(box, (i) => (oldest = Math.min(oldest, this.last[i])));
    return run - oldest;
  }

  /** Marks the cells of `box` searched by run `run`. */
  searched(box: Box, run: number): void {
    this.forCells(box, (i) => (this.last[i] = run));
  }

  /** The cells whose centre lies in `box` (the one nearest its centre when none does: a small box). */
  private forCells(box: Box, visit: (index: number) => void): void {
    const c0 = Math.max(0, Math.ceil(box.x / this.cell - 0.5));
    const c1 = Math.min(this.cols - 1, Math.floor((box.x + box.width) / this.cell - 0.5));
    const r0 = Math.max(0, Math.ceil(box.y / this.cell - 0.5));
    const r1 = Math.min(this.rows - 1, Math.floor((box.y + box.height) / this.cell - 0.5));
    if (c0 > c1 || r0 > r1) {
      const c = Math.min(this.cols - 1, Math.max(0, Math.floor((box.x + box.width / 2) / this.cell)));
      const r = Math.min(this.rows - 1, Math.max(0, Math.floor((box.y + box.height / 2) / this.cell)));
      visit(r * this.cols + c);
      return;
    }
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) visit(r * this.cols + c);
  }
}
