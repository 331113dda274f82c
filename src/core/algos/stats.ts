/**
 * Small float64 statistics used by advantages, sampling and metrics.
 *
 * Convention for the whole project: `std` is the *sample* standard deviation (Bessel's N−1),
 * the same as `torch.std` and therefore the same as TRL's and veRL's GRPO normaliser and their
 * `reward/std`. A set of fewer than 2 values has std 0 (no spread is observable).
 */

/** Anything indexable by position: number[], Float32Array, Float64Array, Uint8Array... */
export type Numbers = ArrayLike<number>;

export function sum(xs: Numbers): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s;
}

/** Arithmetic mean; NaN for an empty set (there is no mean of nothing). */
export function mean(xs: Numbers): number {
  return xs.length === 0 ? NaN : sum(xs) / xs.length;
}

/** Sample variance (N−1); 0 when fewer than 2 values. Two-pass for accuracy. */
export function variance(xs: Numbers): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < n; i++) s += (xs[i] - m) * (xs[i] - m);
  return s / (n - 1);
}

/** Sample standard deviation (N−1); 0 when fewer than 2 values. */
export function std(xs: Numbers): number {
  return Math.sqrt(variance(xs));
}

export function min(xs: Numbers): number {
  let m = Infinity;
  for (let i = 0; i < xs.length; i++) if (xs[i] < m) m = xs[i];
  return xs.length === 0 ? NaN : m;
}

export function max(xs: Numbers): number {
  let m = -Infinity;
  for (let i = 0; i < xs.length; i++) if (xs[i] > m) m = xs[i];
  return xs.length === 0 ? NaN : m;
}

/** mean, std (sample), min, max in one object; all NaN except std (0) for an empty set. */
export function describe(xs: Numbers): { mean: number; std: number; min: number; max: number } {
  return { mean: mean(xs), std: std(xs), min: min(xs), max: max(xs) };
}

/** The values at positions where mask ≠ 0 (policy tokens), as a new Float64Array. */
export function masked(xs: Numbers, mask: Numbers): Float64Array {
  if (xs.length !== mask.length) throw new RangeError(`masked: ${xs.length} values vs ${mask.length} mask entries`);
  let n = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) n++;
  const out = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) out[k++] = xs[i];
  return out;
}

/** Mean over positions where mask ≠ 0; NaN when the mask selects nothing. */
export function maskedMean(xs: Numbers, mask: Numbers): number {
  return mean(masked(xs, mask));
}

/**
 * Explained variance 1 − Var(target − pred) / Var(target) (CleanRL's `explained_var`).
 * 1 = perfect value function, 0 = no better than a constant, < 0 = worse than a constant.
 * NaN when Var(target) = 0: the ratio is undefined (CleanRL does the same); JSON writes null.
 */
export function explainedVariance(pred: Numbers, target: Numbers): number {
  if (pred.length !== target.length) throw new RangeError(`explainedVariance: ${pred.length} predictions vs ${target.length} targets`);
  const vy = variance(target);
  if (vy === 0) return NaN;
  const diff = new Float64Array(target.length);
  for (let i = 0; i < diff.length; i++) diff[i] = target[i] - pred[i];
  return 1 - variance(diff) / vy;
}
