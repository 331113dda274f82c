import { describe, expect, it } from 'vitest';
import { ema, envStepsOf, interpolate, meanBand, seriesOf, thinSeries, tickFormat, xValues } from './compare.ts';
import type { MetricRow } from '../../core/runs/format.ts';

const row = (i: number, extra: Record<string, number> = {}) => ({ iteration: i, wall_s: i * 2, ...extra }) as MetricRow;

describe('EMA', () => {
  it('w = 0 is the identity; a constant stays constant (debiased)', () => {
    expect(ema([1, 2, 3], 0)).toEqual([1, 2, 3]);
    for (const v of ema([5, 5, 5, 5], 0.9)) expect(v).toBeCloseTo(5, 12);
  });
  it('matches the recurrence with debiasing', () => {
    const w = 0.6;
    const s = ema([1, 3], w);
    expect(s[0]).toBeCloseTo(1, 12);
    expect(s[1]).toBeCloseTo((w * (1 - w) * 1 + (1 - w) * 3) / (1 - w * w), 12);
  });
  it('NaN stays NaN and does not move the average', () => {
    const s = ema([1, NaN, 1], 0.5);
    expect(s[1]).toBeNaN();
    expect(s[2]).toBeCloseTo(1, 12);
  });
});

describe('x axes', () => {
  it('iteration is 1-based (iterations done); wall time from wall_s; env steps cumulative', () => {
    const rows = [row(0, { 'perf/env_steps_per_s': 100, 'perf/rollout_s': 0.5 }), row(1, { 'perf/env_steps_per_s': 200, 'perf/rollout_s': 0.5 })];
    expect(xValues(rows, 'iteration')).toEqual([1, 2]);
    expect(xValues(rows, 'wallS')).toEqual([0, 2]);
    expect(xValues(rows, 'envSteps')).toEqual([50, 150]);
  });
  it('env steps fall back to episodes × mean length', () => {
    expect(envStepsOf({ 'perf/episodes_per_s': 10, 'perf/iteration_s': 2, 'episode/length_mean': 3 })).toBe(60);
    expect(envStepsOf({})).toBe(0);
  });
});

describe('mean ± band', () => {
  it('iteration axis: mean and sample std over the iterations every seed reached', () => {
    const a = seriesOf([row(0, { m: 1 }), row(1, { m: 2 }), row(2, { m: 3 })], 'm', 'iteration');
    const b = seriesOf([row(0, { m: 3 }), row(1, { m: 4 })], 'm', 'iteration');
    const band = meanBand([a, b], 'iteration');
    expect(band.x).toEqual([1, 2]);
    expect(band.mean).toEqual([2, 3]);
    const sd = Math.SQRT2; // sample std of {1, 3}
    expect(band.lo[0]).toBeCloseTo(2 - sd, 12);
    expect(band.hi[1]).toBeCloseTo(3 + sd, 12);
    expect(band.n).toEqual([2, 2]);
  });
  it('one seed: a zero-width band; no overlap: empty', () => {
    const a = { x: [1, 2], y: [1, 2] };
    const one = meanBand([a], 'iteration');
    expect(one.lo).toEqual(one.mean);
    expect(meanBand([a, { x: [5, 6], y: [1, 1] }], 'iteration').x).toEqual([]);
  });
  it('other axes interpolate onto a common grid over the shared range', () => {
    const a = { x: [0, 10], y: [0, 10] };
    const b = { x: [0, 5, 20], y: [2, 7, 22] };
    const band = meanBand([a, b], 'envSteps', 3);
    expect(band.x).toEqual([0, 5, 10]);
    expect(band.mean).toEqual([1, 6, 11]);
    expect(interpolate(b, 12.5)).toBeCloseTo(14.5, 12);
    expect(interpolate(b, 25)).toBeNaN();
  });
  it('thinning keeps the ends', () => {
    const s = { x: Array.from({ length: 1000 }, (_, i) => i), y: Array.from({ length: 1000 }, (_, i) => i) };
    const t = thinSeries(s, 100);
    expect(t.x).toHaveLength(100);
    expect(t.x[0]).toBe(0);
    expect(t.x[99]).toBe(999);
  });
});

describe('tick labels', () => {
  it('neighbouring ticks never print alike; large values get separators', () => {
    const f = tickFormat(1.92, 1.94);
    expect(new Set([1.92, 1.925, 1.93, 1.935, 1.94].map(f)).size).toBe(5);
    expect(tickFormat(0, 12000)(12000)).toBe('12,000');
    expect(tickFormat(0.0034, 0.0068)(0.0051)).toBe('0.0051');
    expect([0, 0.25, 0.5, 0.75, 1].map(tickFormat(0, 1))).toEqual(['0', '0.25', '0.5', '0.75', '1']);
  });
});
