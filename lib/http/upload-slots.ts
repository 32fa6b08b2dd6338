// How many uploads have their bodies parsed at once. Parsing a multipart body is work on the
// HTTP event loop: with 200 uploads arriving together every loop turn handled a chunk of each,
// and a GET waited behind all of them (p99 360 ms in bench-load.ts; with 4 slots it stays near
// the idle figure). Waiting uploads cost nothing: their sockets are paused. An upload that holds
// its slot longer than SLOT_HOLD_MS (a slow link, a long video) gives it up and goes on anyway,
// so slow clients never keep others waiting for long.

/** 4: more than enough to keep 2 cores busy with parsing; few enough that a GET waits behind little. */
export const UPLOAD_SLOTS = 4;
/** After this an upload no longer counts against the slots. */
export const SLOT_HOLD_MS = 2000;

export class UploadSlots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly slots = UPLOAD_SLOTS,
    private readonly holdMs = SLOT_HOLD_MS,
  ) {}

  /** Resolves when a slot is free, with the function that frees it (safe to call twice). */
  async acquire(): Promise<() => void> {
    if (this.active >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.waiting.shift();
      if (next) next(); // the slot passes on: `active` is unchanged
      else this.active--;
    };
    const timer = setTimeout(release, this.holdMs);
    timer.unref();
    return release;
  }
}
