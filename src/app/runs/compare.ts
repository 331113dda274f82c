/**
 * The math behind the Compare view (pure, unit-tested): the x axis (iterations, env steps or
 * training time), EMA smoothing, and seeds of one config folded into mean ± one standard
 * deviation on a common x grid.
 */
import type { MetricRow } from '../../core/runs/format.ts';

export type XAxis = 'iteration' | 'envSteps' | 'wallS';

export const X_AXES: { id: XAxis; label: string; unit: string }[] = [
  { id: 'iteration', label: 'iteration', unit: 'iterations' },
  { id: 'envSteps', label: 'env steps', unit: 'env steps' },
  { id: 'wallS', label: 'wall time', unit: 's' },
];

/** A curve: x increasing, y possibly NaN. */
export interface Series {
  x: number[];
  y: number[];
}

/**
 * Env steps taken in one iteration: the rollout's rate × its busy time (exact for the grid and
 * token trainers), else episodes × mean length.
 */
export function envStepsOf(r: Readonly<Record<string, number>>): number {
  const a = r['perf/env_steps_per_s'] * r['perf/rollout_s'];
  if (Number.isFinite(a)) return a;
  const episodes = r['perf/episodes_per_s'] * r['perf/iteration_s'];
  const len = Number.isFinite(r['episode/turns_mean']) ? r['episode/turns_mean'] : r['episode/length_mean'];
  const b = episodes * len;
  return Number.isFinite(b) ? b : 0;
}

/** x values for each row: iterations done (iteration + 1), cumulative env steps, or training seconds. */
export function xValues(rows: readonly MetricRow[], axis: XAxis): number[] {
  if (axis === 'iteration') return rows.map((r) => r.iteration + 1);
  if (axis === 'wallS') {
    // A row without wall_s (a hand-made file) continues from the previous one.
    let last = 0;
    return rows.map((r) => (Number.isFinite(r.wall_s) ? (last = Math.max(last, r.wall_s)) : last));
  }
  let sum = 0;
  return rows.map((r) => (sum += envStepsOf(r)));
}

/** A metric of a run as a series over `axis`. */
export function seriesOf(rows: readonly MetricRow[], key: string, axis: XAxis): Series {
  return { x: xValues(rows, axis), y: rows.map((r) => (Number.isFinite(r[key]) ? r[key] : NaN)) };
}

/**
 * Exponential moving average with TensorBoard's debiasing: s_t = w·s_{t−1} + (1−w)·y_t, divided
 * by 1 − w^n (n = finite points so far), so the first points are not pulled toward 0. NaN points
 * stay NaN and do not move the average. w = 0 returns y unchanged.
 */
export function ema(y: readonly number[], w: number): number[] {
  if (!(w > 0)) return y.slice();
  const weight = Math.min(w, 0.999);
  let acc = 0;
  let n = 0;
  return y.map((v) => {
    if (!Number.isFinite(v)) return NaN;
    acc = weight * acc + (1 - weight) * v;
    n++;
    return acc / (1 - weight ** n);
  });
}

/** y of a series at x by linear interpolation between its finite neighbours; NaN outside its range. */
export function interpolate(s: Series, x: number): number {
  const { x: xs, y: ys } = s;
  let lo = -1;
  let hi = -1;
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(ys[i])) continue;
    if (xs[i] <= x) lo = i;
    if (xs[i] >= x) {
      hi = i;
      break;
    }
  }
  if (lo < 0 || hi < 0) return NaN;
  if (xs[hi] === xs[lo]) return ys[lo];
  const t = (x - xs[lo]) / (xs[hi] - xs[lo]);
  return ys[lo] + t * (ys[hi] - ys[lo]);
}

/** Mean ± one standard deviation across seeds at each grid x. */
export interface Band {
  x: number[];
  mean: number[];
  lo: number[];
  hi: number[];
  /** Seeds with a value at each x. */
  n: number[];
}

/**
 * Folds several seeds of one config into a band: the grid is the iterations all seeds reached
 * (iteration axis) or `points` evenly spaced x over the range all seeds cover (env steps and
 * time, where seeds' x differ); std is the sample standard deviation (n − 1), 0 for one seed.
 */
export function meanBand(series: readonly Series[], axis: XAxis, points = 200): Band {
  const out: Band = { x: [], mean: [], lo: [], hi: [], n: [] };
  const live = series.filter((s) => s.x.length > 0);
  if (live.length === 0) return out;
  const from = Math.max(...live.map((s) => s.x[0]));
  const to = Math.min(...live.map((s) => s.x[s.x.length - 1]));
  if (!(to >= from)) return out;
  let grid: number[];
  if (axis === 'iteration') {
    grid = [];
    for (let x = Math.ceil(from); x <= to; x++) grid.push(x);
  } else if (to === from) grid = [from];
  else grid = Array.from({ length: points }, (_, i) => from + ((to - from) * i) / (points - 1));
  for (const x of grid) {
    const ys = live.map((s) => interpolate(s, x)).filter(Number.isFinite);
    const n = ys.length;
    const mean = n ? ys.reduce((a, b) => a + b, 0) / n : NaN;
    const sd = n > 1 ? Math.sqrt(ys.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
    out.x.push(x);
    out.mean.push(mean);
    out.lo.push(mean - sd);
    out.hi.push(mean + sd);
    out.n.push(n);
  }
  return out;
}

/** Up to `max` points of a series, evenly picked (recharts' cost grows with points). */
export function thinSeries(s: Series, max = 400): Series {
  if (s.x.length <= max) return s;
  const step = (s.x.length - 1) / (max - 1);
  const idx = Array.from({ length: max }, (_, i) => Math.round(i * step));
  return { x: idx.map((i) => s.x[i]), y: idx.map((i) => s.y[i]) };
}

/**
 * A tick formatter with as many decimals as the ticks' spacing needs (so neighbouring ticks never
 * print alike), thousands separators for large values, and exponents for tiny ones.
 */
export function tickFormat(min: number, max: number): (v: number) => string {
  const step = (max - min) / 4 || Math.abs(max) || 1;
  // One decimal more than the spacing's order: ticks at quarters (0.25) keep their second digit.
  const decimals = Math.min(7, Math.max(0, Math.ceil(-Math.log10(step)) + 1));
  return (v) => {
    if (Math.abs(v) >= 10_000) return v.toLocaleString('en-US', { maximumFractionDigits: 0 });
    if (v !== 0 && Math.abs(v) < 1e-4 && decimals > 5) return v.toExponential(1);
    // Trailing zeros add nothing (0.50 → 0.5, 1.000 → 1).
    return String(Number(v.toFixed(decimals)));
  };
}
