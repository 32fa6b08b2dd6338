// Where each detector run looks, within a budget of tiles (model runs of 15-30 ms each): the
// faces already tracked first, then a rotating share of the whole frame (so every part of it is
// searched every few runs, also where nothing moves), then regions with motion, largest first.
// What does not fit waits for the next run. A whole 1080p frame at min_size 30 is 17 tiles
// (620 ms on this appliance); the face log's real-time target leaves about a quarter of that
// per run at 5 runs a second.
import type { Box, DetectOptions } from '../types.js';
import { countTiles } from './blazeface.js';
import { planTiles } from './tiles.js';

/** Tiles one detector run may cost. */
export const MAX_TILES_PER_RUN = 4;
/** Tiles of the whole-frame search taken per run: the frame is covered every (its tiles / this) runs. */
export const SCAN_TILES_PER_RUN = 1;

export class ScanSchedule {
  private readonly parts: number;
  private next_ = 0;

  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly minSize: number,
  ) {
    const full = planTiles(width, height, minSize).reduce((n, l) => n + l.tiles.length, 0);
    this.parts = Math.max(1, Math.ceil(full / SCAN_TILES_PER_RUN));
  }

  /** Options for the next run, given the tracked faces' neighbourhoods and the regions with motion. */
  next(tracked: Box[], moved: Box[]): DetectOptions {
    const scanPart = { index: this.next_, of: this.parts };
    this.next_ = (this.next_ + 1) % this.parts;
    if (this.parts === 1) return { minSize: this.minSize }; // the whole frame fits the budget share
    const budget = MAX_TILES_PER_RUN - SCAN_TILES_PER_RUN;
    const regions: Box[] = [];
    for (const r of [...tracked, ...[...moved].sort((a, b) => b.width * b.height - a.width * a.height)]) {
      const withIt = [...regions, r];
      if (countTiles(this.width, this.height, { minSize: this.minSize, regions: withIt }) > budget && regions.length >= tracked.length) continue;
      regions.push(r);
    }
    return { minSize: this.minSize, regions, scanPart };
  }
}
