/**
 * A step's check over the stream of iteration metrics: pure, no store, no DOM.
 *
 * The check holds at an iteration when every condition does; the step is done once it held for
 * `for` iterations in a row (by iteration `within`, when set). A metric missing at an iteration
 * (or not finite) fails its condition there. `rise` / `fall` compare with the run's start: the mean
 * of the metric over the first BASELINE_ITERATIONS iterations that report it, and count only
 * after those. A condition with `window: w` reads the mean of the last w iterations that report
 * the metric (and nothing before w of them exist), so one noisy batch neither makes nor breaks it.
 */
import type { Check, Condition } from './schema.ts';

export const BASELINE_ITERATIONS = 3;

export type Metrics = Readonly<Record<string, number>>;

export interface CheckStatus {
  /** waiting: no iterations yet; watching: not yet; done: held long enough; missed: `within` passed. */
  state: 'waiting' | 'watching' | 'done' | 'missed';
  /** Iterations in a row the check holds, up to now (or up to when it was done). */
  streak: number;
  need: number;
  /** 1-based iteration at which it was done. */
  doneAt: number | null;
  /** Each condition's reading at the last iteration looked at (NaN when absent). */
  readings: { condition: Condition; value: number; holds: boolean }[];
}

/** The metric at iteration i, or its mean over the last `window` iterations up to i that report it. */
function valueAt(c: Condition, stream: readonly Metrics[], i: number): number {
  const own = stream[i][c.metric];
  if (own === undefined || !Number.isFinite(own)) return NaN;
  const w = c.window ?? 1;
  let s = 0;
  let n = 0;
  for (let k = i; k >= 0 && n < w; k--) {
    const v = stream[k][c.metric];
    if (v !== undefined && Number.isFinite(v)) {
      s += v;
      n++;
    }
  }
  return n < w ? NaN : s / n;
}

/** The value a condition compares: the metric, or its change from the baseline for rise/fall. */
function reading(c: Condition, stream: readonly Metrics[], i: number, baselines: Map<string, number>): number {
  const v = valueAt(c, stream, i);
  if (!Number.isFinite(v)) return NaN;
  if (c.op === '>=' || c.op === '<=') return v;
  const b = baselines.get(c.metric);
  return b === undefined ? NaN : v - b;
}

/** Baseline per rise/fall metric and the index of the first iteration after it (Infinity when not yet). */
function baselinesOf(check: Check, stream: readonly Metrics[]): { values: Map<string, number>; from: Map<string, number> } {
  const values = new Map<string, number>();
  const from = new Map<string, number>();
  for (const c of check.all) {
    if (c.op === '>=' || c.op === '<=' || values.has(c.metric)) continue;
    let s = 0;
    let n = 0;
    let i = 0;
    for (; i < stream.length && n < BASELINE_ITERATIONS; i++) {
      const v = stream[i][c.metric];
      if (v !== undefined && Number.isFinite(v)) {
        s += v;
        n++;
      }
    }
    if (n === BASELINE_ITERATIONS) {
      values.set(c.metric, s / n);
      from.set(c.metric, i);
    }
  }
  return { values, from };
}

/** Slack for float noise at the boundary ((0.1 + 0.2 + 0.3) / 3 is not 0.2). */
const EPS = 1e-9;

function holds(c: Condition, x: number): boolean {
  if (!Number.isFinite(x)) return false;
  switch (c.op) {
    case '>=':
      return x >= c.value - EPS;
    case '<=':
      return x <= c.value + EPS;
    case 'rise':
      return x >= c.by - EPS;
    case 'fall':
      return -x >= c.by - EPS;
  }
}

export function evaluateCheck(check: Check, stream: readonly Metrics[]): CheckStatus {
  const need = check.for;
  if (stream.length === 0) return { state: 'waiting', streak: 0, need, doneAt: null, readings: check.all.map((c) => ({ condition: c, value: NaN, holds: false })) };
  const { values, from } = baselinesOf(check, stream);
  const last = check.within === undefined ? stream.length : Math.min(stream.length, check.within);
  let streak = 0;
  let readings: CheckStatus['readings'] = [];
  for (let i = 0; i < last; i++) {
    readings = check.all.map((c) => {
      const value = reading(c, stream, i, values);
      const counted = c.op === '>=' || c.op === '<=' || i >= (from.get(c.metric) ?? Infinity);
      return { condition: c, value, holds: counted && holds(c, value) };
    });
    streak = readings.every((r) => r.holds) ? streak + 1 : 0;
    if (streak >= need) return { state: 'done', streak, need, doneAt: i + 1, readings };
  }
  const missed = check.within !== undefined && stream.length >= check.within;
  return { state: missed ? 'missed' : 'watching', streak, need, doneAt: null, readings };
}

const fmtNum = (x: number) => (!Number.isFinite(x) ? '–' : Math.abs(x) >= 100 || x === 0 ? String(Math.round(x)) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(2));

/** How a check's metric reads to a student: the dashboard chart's name and the unit it is drawn in. */
const READING_LABELS: Record<string, { label: string; unit: 'share' | 'nats' | 'count' | 'versions' | 'plain' }> = {
  'episode/success_rate': { label: 'Success rate', unit: 'share' },
  'actor/entropy': { label: 'Policy entropy', unit: 'nats' },
  'groups/frac_zero_std': { label: 'Zero-spread groups', unit: 'share' },
  'groups/dropped': { label: 'Groups dropped', unit: 'count' },
  'critic/explained_variance': { label: 'Critic explained variance', unit: 'plain' },
  'async/staleness_mean': { label: 'Staleness (mean)', unit: 'versions' },
  'async/is_ratio_max': { label: 'Largest importance ratio', unit: 'plain' },
  'episode/turns_mean': { label: 'Turns per episode', unit: 'plain' },
  'reward/mean': { label: 'Reward (mean)', unit: 'plain' },
  // Calls per episode, not a share: 2 calls in an episode read "200%" as a share.
  'tools/call_frequency': { label: 'Tool calls per episode', unit: 'plain' },
  'tools/recovery_rate': { label: 'Recovered (tool failures)', unit: 'share' },
  'eval/pass_at_one': { label: 'Held-out pass@1', unit: 'share' },
  'eval/pass_at_k': { label: 'Held-out pass@k', unit: 'share' },
};

/** A value in its unit: shares as percent (a change in points), entropy in nats, staleness in versions. */
function inUnit(x: number, unit: (typeof READING_LABELS)[string]['unit'], change = false): string {
  if (!Number.isFinite(x)) return '–';
  if (unit === 'share') return change ? `${Math.round(x * 100)} points` : `${Math.round(x * 100)}%`;
  if (unit === 'nats') return `${Math.abs(x) < 0.001 && x !== 0 ? '< 0.001' : x.toFixed(3)} nats`;
  if (unit === 'versions') return `${fmtNum(x)} versions`;
  return fmtNum(x);
}

/** One condition with its current reading, e.g. "Zero-spread groups 88% ≥ 80%" (a metric without a label reads as its key). */
export function describeReading(r: CheckStatus['readings'][number]): string {
  const c = r.condition;
  const known = READING_LABELS[c.metric];
  const unit = known?.unit ?? 'plain';
  const label = known?.label ?? c.metric;
  const name = c.window && c.window > 1 ? `${label} (mean of ${c.window} iterations)` : label;
  if (!('by' in c)) return `${name} ${inUnit(r.value, unit)} ${c.op === '>=' ? '≥' : '≤'} ${inUnit(c.value, unit)}`;
  const ch = Number.isFinite(r.value) ? `${r.value >= 0 ? '+' : '−'}${inUnit(Math.abs(r.value), unit, true)}` : 'not yet';
  return `${name} ${c.op === 'rise' ? 'up' : 'down'} ${ch} from its start (needs ${c.op === 'rise' ? '+' : '−'}${inUnit(c.by, unit, true)})`;
}
