/**
 * Geometry for the dashboard's line charts, pure: nice axis ticks, value → pixel scales, and
 * SVG path strings for lines (gaps where a value is missing) and bands.
 */

/** One iteration's metrics plus the x value and the reward band, as the charts read them. */
export type MetricPoint = Record<string, number> & { it: number };

/** About `count` round tick values covering [lo, hi] (1, 2, 2.5, 5 × 10^k steps). */
export function niceTicks(lo: number, hi: number, count = 4): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count - 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  // The round step whose tick count is closest to `count` (ties: the larger step).
  let step = mag;
  let best = Infinity;
  for (const m of [1, 2, 2.5, 5, 10]) {
    const s = m * mag;
    const n = Math.floor(hi / s + 1e-9) - Math.ceil(lo / s - 1e-9) + 1;
    if (Math.abs(n - count) <= best) {
      best = Math.abs(n - count);
      step = s;
    }
  }
  const out: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

export type Bound = number | 'auto';

/**
 * The y range to draw: fixed ends stay, 'auto' ends follow the data with a little headroom; a
 * flat series gets a visible span around its value.
 */
export function yRange(values: readonly number[], domain: readonly [Bound, Bound] = ['auto', 'auto'], ref?: number): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (ref !== undefined && Number.isFinite(ref)) {
    lo = Math.min(lo, ref);
    hi = Math.max(hi, ref);
  }
  if (lo === Infinity) [lo, hi] = [0, 1];
  if (hi - lo < 1e-12) {
    const pad = Math.abs(hi) > 1e-12 ? Math.abs(hi) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  } else if (domain[0] === 'auto' || domain[1] === 'auto') {
    const pad = (hi - lo) * 0.06;
    lo -= pad;
    hi += pad;
  }
  const a = domain[0] === 'auto' ? lo : domain[0];
  const b = domain[1] === 'auto' ? hi : Math.max(domain[1], domain[0] === 'auto' ? lo : domain[0]);
  return a < b ? [a, b] : [a, a + 1];
}

export interface Scale {
  (v: number): number;
}

export function linear(d0: number, d1: number, r0: number, r1: number): Scale {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/** `M x y L x y ...` through the finite points; a missing value starts a new segment. */
export function linePath(xs: readonly number[], ys: readonly (number | undefined)[], sx: Scale, sy: Scale): string {
  let d = '';
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (y === undefined || !Number.isFinite(y)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${sx(xs[i]).toFixed(1)} ${sy(y).toFixed(1)}`;
    pen = true;
  }
  return d;
}

/** A closed polygon between `lo` and `hi` over the points where both are finite. */
export function bandPath(xs: readonly number[], lo: readonly (number | undefined)[], hi: readonly (number | undefined)[], sx: Scale, sy: Scale): string {
  const idx = xs.map((_, i) => i).filter((i) => Number.isFinite(lo[i]) && Number.isFinite(hi[i]));
  if (idx.length < 2) return '';
  const top = idx.map((i) => `${sx(xs[i]).toFixed(1)} ${sy(hi[i]!).toFixed(1)}`);
  const bottom = idx.reverse().map((i) => `${sx(xs[i]).toFixed(1)} ${sy(lo[i]!).toFixed(1)}`);
  return `M${top.join('L')}L${bottom.join('L')}Z`;
}
