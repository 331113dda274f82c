/**
 * The algorithm descriptors name metric keys as plain strings (the algorithms room does not read
 * the metric registry): each must be declared here, a descriptor's own `metrics` as per-iteration
 * keys, its chart lines as any declared key.
 */
import { describe, expect, it } from 'vitest';
import { ALGO_DESCRIPTORS } from '../algos/registry/index.ts';
import { isMetricKey, metricDecl } from './lookup.ts';

describe("the algorithm descriptors' metric keys", () => {
  it('are declared: own metrics per iteration (no stream), chart lines any declared key', () => {
    const bad: string[] = [];
    for (const d of ALGO_DESCRIPTORS) {
      for (const k of d.metrics ?? []) {
        const decl = metricDecl(k);
        if (!decl || decl.stream !== undefined) bad.push(`${d.name}.metrics: ${k}`);
      }
      for (const ch of d.charts ?? []) for (const l of ch.lines) if (!isMetricKey(l.key)) bad.push(`${d.name}.charts.${ch.id}: ${l.key}`);
    }
    expect(bad).toEqual([]);
  });

  it('the check refuses an undeclared key and a chart-only key as an own metric', () => {
    expect(isMetricKey('remax/greedy_reward_mean')).toBe(true);
    expect(isMetricKey('remax/greedy_reward_median')).toBe(false);
    expect(metricDecl('reward/lo')?.stream).toBe('chart');
  });
});
