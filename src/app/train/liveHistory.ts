/**
 * Bounds the live dashboard's metric history, so a tab that trains for hours keeps a flat heap:
 * past `cap` points, the older part is thinned to every other point, while the latest `recent`
 * points stay at full resolution (the health badges read the last few, the charts the shape).
 * Every point keeps its own `it`, so charts place thinned points where they belong. The run's
 * saved record keeps every iteration; only what the page holds in memory is thinned.
 */

/** Points the live history holds at most (~3 KB each for a grid run: ~15 MB). */
export const LIVE_HISTORY_CAP = 5000;
/** Latest points never thinned. */
export const LIVE_HISTORY_RECENT = 1000;

/**
 * `points` thinned in place when it holds more than `cap` (else untouched): the oldest
 * `length − recent` points keep every other one (always their first), the last `recent` all.
 */
export function boundHistory<T>(points: T[], cap = LIVE_HISTORY_CAP, recent = LIVE_HISTORY_RECENT): void {
  if (points.length <= cap) return;
  const old = points.length - recent;
  let w = 0;
  for (let r = 0; r < old; r += 2) points[w++] = points[r];
  for (let r = old; r < points.length; r++) points[w++] = points[r];
  points.length = w;
}
