/**
 * Aggregate statistics over runs, as an RL paper's reviewer expects them (Agarwal et al. 2021,
 * "Deep RL at the Edge of the Statistical Precipice", and its rliable library):
 *
 * - scores are a matrix [run][task]: one final score per run (seed) and task (env); a sweep here
 *   has one task, and the estimators reduce to their one-task forms;
 * - IQM is the interquartile mean of all scores: scipy's trim_mean(x, 0.25), which drops
 *   floor(n/4) scores at each end of the sorted list and averages the rest (robust to a
 *   lucky or failed seed, far less noisy than the median);
 * - confidence intervals come from the stratified bootstrap: runs are resampled with
 *   replacement within each task, the aggregate is recomputed, and the 2.5th/97.5th
 *   percentiles of those replicates bound the 95% interval (percentile method, numpy's
 *   linear interpolation);
 * - the probability of improvement P(X > Y) is the Mann–Whitney statistic per task (ties count
 *   ½), averaged over tasks: the chance that a random run of X beats a random run of Y;
 * - a performance profile is, per threshold τ, the fraction of runs scoring above τ.
 *
 * Replicates are drawn from a seeded generator, so the same scores give the same intervals.
 */
import { Rng } from '../util/rng.ts';

/** Scores of one config: [run][task]; every run has a score for every task. */
export type ScoreMatrix = readonly (readonly number[])[];

/** A point estimate with its confidence interval. */
export interface Interval {
  value: number;
  lo: number;
  hi: number;
}

export interface BootstrapOptions {
  /** Bootstrap replicates (rliable uses 50,000; 2,000 bound a 95% interval to ~±1% of its width). */
  reps?: number;
  /** Confidence level in (0, 1); 0.95 = the 2.5th to 97.5th percentiles. */
  confidence?: number;
  /** Seed of the resampling stream: the same scores and seed give the same interval. */
  seed?: number;
}

const DEFAULTS: Required<BootstrapOptions> = { reps: 2000, confidence: 0.95, seed: 0 };

/** numpy.percentile(x, q) with its default linear interpolation; q in [0, 100]. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (q / 100) * (s.length - 1);
  const i = Math.floor(pos);
  const f = pos - i;
  return i + 1 < s.length ? s[i] + f * (s[i + 1] - s[i]) : s[i];
}

/** The mean; NaN for no values. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** scipy.stats.trim_mean(values, 0.25): the mean after dropping floor(n/4) values at each end. */
export function iqmOf(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const cut = Math.floor(s.length * 0.25);
  return mean(s.slice(cut, s.length - cut));
}

const flat = (m: ScoreMatrix): number[] => m.flat();

/** IQM of every score of every run and task. */
export const iqm = (m: ScoreMatrix): number => iqmOf(flat(m));

/** Mean of every score. */
export const meanScore = (m: ScoreMatrix): number => mean(flat(m));

/** Columns of the matrix: the scores of each task. */
function tasks(m: ScoreMatrix): number[][] {
  if (m.length === 0) return [];
  const k = m[0].length;
  for (const row of m) if (row.length !== k) throw new RangeError(`scores: every run needs ${k} task scores, one has ${row.length}`);
  return Array.from({ length: k }, (_, j) => m.map((row) => row[j]));
}

/** One stratified resample: within each task, runs drawn with replacement (same run count). */
function resample(m: ScoreMatrix, rng: Rng): number[][] {
  const n = m.length;
  const cols = tasks(m).map((col) => Array.from({ length: n }, () => col[rng.int(0, n)]));
  return Array.from({ length: n }, (_, i) => cols.map((c) => c[i]));
}

/** The percentile interval of `replicates` around the point estimate `value`. */
function interval(value: number, replicates: readonly number[], confidence: number): Interval {
  const tail = ((1 - confidence) / 2) * 100;
  return { value, lo: percentile(replicates, tail), hi: percentile(replicates, 100 - tail) };
}

/**
 * `aggregate` of the scores with its stratified-bootstrap confidence interval. With one run per
 * task the interval is the point (there is nothing to resample).
 */
export function bootstrapInterval(m: ScoreMatrix, aggregate: (m: ScoreMatrix) => number, options: BootstrapOptions = {}): Interval {
  const o = { ...DEFAULTS, ...options };
  if (m.length === 0) return { value: NaN, lo: NaN, hi: NaN };
  const rng = new Rng(o.seed);
  const reps = Array.from({ length: o.reps }, () => aggregate(resample(m, rng)));
  return interval(aggregate(m), reps, o.confidence);
}

/** P(X > Y) for one task: the normalised Mann–Whitney U (ties count ½). */
export function probabilityOfImprovementOne(x: readonly number[], y: readonly number[]): number {
  if (x.length === 0 || y.length === 0) return NaN;
  let wins = 0;
  for (const a of x) for (const b of y) wins += a > b ? 1 : a === b ? 0.5 : 0;
  return wins / (x.length * y.length);
}

/** P(X > Y) averaged over tasks: x and y are [run][task] with the same tasks (run counts may differ). */
export function probabilityOfImprovement(x: ScoreMatrix, y: ScoreMatrix): number {
  const tx = tasks(x);
  const ty = tasks(y);
  if (tx.length !== ty.length) throw new RangeError(`probability of improvement: ${tx.length} tasks against ${ty.length}`);
  return mean(tx.map((col, j) => probabilityOfImprovementOne(col, ty[j])));
}

/** P(X > Y) with its interval: X's and Y's runs are resampled independently, task by task. */
export function probabilityOfImprovementInterval(x: ScoreMatrix, y: ScoreMatrix, options: BootstrapOptions = {}): Interval {
  const o = { ...DEFAULTS, ...options };
  if (x.length === 0 || y.length === 0) return { value: NaN, lo: NaN, hi: NaN };
  const rng = new Rng(o.seed);
  const reps = Array.from({ length: o.reps }, () => probabilityOfImprovement(resample(x, rng), resample(y, rng)));
  return interval(probabilityOfImprovement(x, y), reps, o.confidence);
}

/** Fraction of all scores above `tau`. */
export const fractionAbove = (m: ScoreMatrix, tau: number): number => {
  const all = flat(m);
  return all.length === 0 ? NaN : all.filter((v) => v > tau).length / all.length;
};

/** A performance profile: for each threshold, the fraction of runs scoring above it, with its interval. */
export function performanceProfile(m: ScoreMatrix, thresholds: readonly number[], options: BootstrapOptions = {}): { tau: number; fraction: Interval }[] {
  return thresholds.map((tau) => ({ tau, fraction: bootstrapInterval(m, (s) => fractionAbove(s, tau), options) }));
}

/** Evenly spaced thresholds from lo to hi inclusive (a profile's x axis). */
export function thresholdsBetween(lo: number, hi: number, count = 21): number[] {
  if (count < 2) return [lo];
  return Array.from({ length: count }, (_, i) => lo + ((hi - lo) * i) / (count - 1));
}

/** Everything a sweep summary or Compare shows for one config. */
export interface ConfigSummary {
  runs: number;
  mean: Interval;
  iqm: Interval;
}

export function summarize(m: ScoreMatrix, options: BootstrapOptions = {}): ConfigSummary {
  return { runs: m.length, mean: bootstrapInterval(m, meanScore, options), iqm: bootstrapInterval(m, iqm, options) };
}

/**
 * A run's final score from its metric rows: the mean of `key` over the last `fraction` of its
 * iterations (at least one row), so one noisy last batch does not decide a run.
 */
export function finalScore(rows: readonly Readonly<Record<string, number>>[], key: string, fraction = 0.1): number {
  const vals = rows.map((r) => r[key]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (vals.length === 0) return NaN;
  const k = Math.max(1, Math.round(vals.length * fraction));
  return mean(vals.slice(-k));
}
