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

/** How a paired comparison on the same items moved: items that went wrong → right and right → wrong. */
export interface PairedFlips {
  fixed: number;
  broken: number;
  /** Exact two-sided sign test (McNemar) on the discordant pairs: chance of a split this uneven if neither side is better. */
  p: number;
}

/**
 * `before[i]` and `after[i]` are one item's outcomes (e.g. one held-out seed's success) under two
 * policies. Only items that changed carry evidence; under "no difference" each change is a fair
 * coin, so p = P(Binomial(n, ½) at least as far from n/2 as observed), both tails.
 */
export function pairedFlips(before: readonly boolean[], after: readonly boolean[]): PairedFlips {
  if (before.length !== after.length) throw new RangeError(`pairedFlips: ${before.length} outcomes before, ${after.length} after`);
  let fixed = 0;
  let broken = 0;
  for (let i = 0; i < before.length; i++) {
    if (!before[i] && after[i]) fixed++;
    else if (before[i] && !after[i]) broken++;
  }
  const n = fixed + broken;
  const k = Math.min(fixed, broken);
  // Σ_{i ≤ k} C(n, i) / 2^n in log space (n may be in the hundreds).
  let logTerm = -n * Math.LN2; // i = 0
  let tail = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i);
    tail += Math.exp(logTerm);
  }
  return { fixed, broken, p: n === 0 ? 1 : Math.min(1, 2 * tail) };
}
