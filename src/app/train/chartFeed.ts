/**
 * The metric history the dashboard draws, fed one iteration at a time and handed to React at
 * most once per animation frame, so a fast trainer never floods React.
 */
import type { IterationView } from '../../runtime/trainWorker/types.ts';
import type { MetricRow } from '../../core/runs/format.ts';
import { boundHistory } from './liveHistory.ts';
import type { MetricPoint } from './trainState.ts';

/** A metric row as the charts draw it: x = iterations done, and the reward band mean ± std clipped to the batch's range. */
export function metricPoint(m: Readonly<Record<string, number>>, iteration: number): MetricPoint {
  const mean = m['reward/mean'];
  const std = m['reward/std'];
  const lo = Math.max(mean - (std || 0), m['reward/min'] ?? -Infinity);
  const hi = Math.min(mean + (std || 0), m['reward/max'] ?? Infinity);
  return { ...m, it: iteration + 1, 'reward/lo': lo, 'reward/hi': hi };
}

/** What a flush hands the store. */
export interface FeedState {
  history: MetricPoint[];
  latest?: IterationView;
  /** Iterations per second over the last ≤ 10 intervals (wall clock, this thread). */
  itPerS: number;
}

/** Iteration stamps the rate is taken over (10 intervals). */
const RATE_WINDOW = 11;

export function createChartFeed(publish: (s: FeedState) => void) {
  let points: MetricPoint[] = [];
  let pending: IterationView | null = null;
  let frame = 0;
  let stamps: number[] = [];
  const rate = () => (stamps.length < 2 ? 0 : ((stamps.length - 1) * 1000) / (stamps[stamps.length - 1] - stamps[0]));
  const flush = () => {
    frame = 0;
    const latest = pending;
    pending = null;
    publish({ history: points.slice(), ...(latest ? { latest } : {}), itPerS: rate() });
  };
  return {
    /** Starts over: empty, or a resumed run's earlier rows. */
    reset(rows: readonly MetricRow[] = []): MetricPoint[] {
      points = rows.map((r) => metricPoint(r, r.iteration));
      pending = null;
      stamps = [];
      if (frame && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(frame);
      frame = 0;
      return points.slice();
    },
    push(v: IterationView): void {
      points.push(metricPoint(v.metrics, v.iteration));
      boundHistory(points);
      pending = v;
      stamps.push(performance.now());
      if (stamps.length > RATE_WINDOW) stamps = stamps.slice(-RATE_WINDOW);
      if (frame) return;
      frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame(flush) : (setTimeout(flush, 16) as unknown as number);
    },
  };
}
