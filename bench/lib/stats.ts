/** Summary statistics of timing samples (milliseconds). */

/** Quantile q in [0, 1] of `xs` by linear interpolation between order statistics (numpy's default). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) throw new RangeError('quantile of an empty sample');
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const s = [...xs].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export interface Summary {
  /** Median. */
  ms: number;
  /** 10th percentile. */
  p10: number;
  /** 90th percentile. */
  p90: number;
  /** Number of samples. */
  n: number;
}

export function summarize(xs: readonly number[]): Summary {
  return { ms: quantile(xs, 0.5), p10: quantile(xs, 0.1), p90: quantile(xs, 0.9), n: xs.length };
}

/** Rounds to `digits` significant digits, for compact JSON and tables. */
export function sig(x: number, digits = 3): number {
  return x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(digits));
}
