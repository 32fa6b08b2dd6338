// Order statistics of samples. Three definitions of a quantile live here because their callers
// were calibrated or reported on different ones; each name says which it is.

/** Linear-interpolated quantile of the finite values; NaN when there are none. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const v = Array.from(values).filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const pos = (v.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

/** The linear-interpolated median of the finite values; NaN when there are none. */
export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5);
}

/**
 * The sample at rank floor(q * n) (the upper one of two middle samples at q = 0.5), with no
 * interpolation: always a value that was measured. Undefined for no values.
 */
export function nearestRankQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * The sample at rank floor(q * (n - 1)) (the lower one of two middle samples at q = 0.5), with no
 * interpolation. Undefined for no values.
 */
export function lowerRankQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))];
}
