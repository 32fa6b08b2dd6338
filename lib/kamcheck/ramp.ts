// The share of the way from `from` to `full` that a value has come, clamped to 0..1: how the
// measures turn a sign (noise, a colour fade, an encoder's mark) into how surely it is there.
// `full` may lie below `from` for a sign that grows as the value falls.
export function ramp(value: number, from: number, full: number): number {
  return Math.max(0, Math.min(1, (value - from) / (full - from)));
}
