/**
 * Compare's statistics: the ticked runs grouped by config (runs whose configs differ only in
 * the seed are one config), each run scored by the mean of the metric over its last 10% of
 * iterations, then per config the IQM and mean with 95% stratified-bootstrap intervals, the
 * probability of improvement for every ordered pair, and a performance profile. The same
 * estimators, score and resampling seed as `npm run sweep` (core/runs/stats.ts), so the same
 * runs give the same figures in both.
 */
import { configDiff, SEED_GROUP_IGNORES, seedGroupKey } from '../../core/runs/format.ts';
import { finalScore, performanceProfile, probabilityOfImprovementInterval, summarize, thresholdsBetween, type ConfigSummary, type Interval } from '../../core/runs/stats.ts';
import type { ChartRun } from './RunCharts.tsx';

export interface StatGroup {
  /** What sets this config apart from the others ("lr=0.001 · groupSize=4"), or its first run's name. */
  label: string;
  runs: { id: string; name: string; score: number }[];
  summary: ConfigSummary;
}

export interface CompareStats {
  metric: string;
  groups: StatGroup[];
  /** P(a run of x scores above a run of y), every ordered pair of configs with scores. */
  improvement: { x: string; y: string; p: Interval }[];
  /** Fraction of each config's runs scoring above tau: one row per threshold, a column per label. */
  profile: { tau: number; fractions: Record<string, Interval> }[];
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const ignored = (path: string) => SEED_GROUP_IGNORES.some((k) => path === k || path.startsWith(`${k}.`));

/** Labels from the fields that differ between the groups (the last part of each path, as the CLI's sweep names runs). */
function labels(groups: readonly ChartRun[][]): string[] {
  const diff = configDiff(groups.map((g) => g[0].config)).filter((d) => !ignored(d.path));
  const out = groups.map((g, i) => (diff.length ? diff.map((d) => `${d.path.split('.').pop()}=${show(d.values[i])}`).join(' · ') : g[0].name.replace(/ · seed \d+$/, '')));
  // Two groups can read the same when they differ only in a long field (reward code): number them.
  return out.map((l, i) => (out.indexOf(l) !== i || out.lastIndexOf(l) !== i ? `${l} (${i + 1})` : l));
}

export function compareStats(runs: readonly ChartRun[], metric: string): CompareStats {
  const by = new Map<string, ChartRun[]>();
  const groups: ChartRun[][] = [];
  for (const r of runs) {
    const k = seedGroupKey(r.config);
    if (!by.has(k)) groups.push(by.set(k, []).get(k)!);
    by.get(k)!.push(r);
  }
  const names = labels(groups);
  const scored = groups.map((g, i) => {
    const rs = g.map((r) => ({ id: r.id, name: r.name, score: finalScore(r.rows as readonly Record<string, number>[], metric) }));
    const scores = rs.filter((r) => Number.isFinite(r.score)).map((r) => [r.score]);
    return { label: names[i], runs: rs, summary: summarize(scores), scores };
  });
  const improvement: CompareStats['improvement'] = [];
  for (const a of scored) for (const b of scored) if (a !== b && a.scores.length && b.scores.length) improvement.push({ x: a.label, y: b.label, p: probabilityOfImprovementInterval(a.scores, b.scores) });
  const all = scored.flatMap((g) => g.scores.map((s) => s[0]));
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  // From just below the lowest score (every config's curve starts at 1) to the highest (0).
  const taus = all.length === 0 ? [] : lo < hi ? thresholdsBetween(lo - (hi - lo) / 10, hi, 12) : [lo];
  const perGroup = scored.map((g) => (g.scores.length ? performanceProfile(g.scores, taus, { reps: 500 }) : []));
  const profile = taus.map((tau, j) => ({ tau, fractions: Object.fromEntries(scored.flatMap((g, i) => (perGroup[i][j] ? [[g.label, perGroup[i][j].fraction]] : []))) }));
  return { metric, groups: scored.map(({ label, runs, summary }) => ({ label, runs, summary })), improvement, profile };
}
