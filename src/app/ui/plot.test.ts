import { describe, expect, it } from 'vitest';
import { bandPath, linePath, linear, niceTicks, yRange } from './plot.ts';

describe('plot geometry', () => {
  it('nice ticks are round and cover the range', () => {
    expect(niceTicks(0, 1, 5)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(niceTicks(0, 1, 3)).toEqual([0, 0.5, 1]);
    expect(niceTicks(3, 97, 4)).toEqual([20, 40, 60, 80]);
    expect(niceTicks(-0.3, 0.3, 3)).toEqual([-0.25, 0, 0.25]);
    expect(niceTicks(2, 2)).toEqual([2]);
  });
  it('y range keeps fixed ends, pads auto ones, and opens up a flat series', () => {
    expect(yRange([0.2, 0.4], [0, 1])).toEqual([0, 1]);
    const [lo, hi] = yRange([10, 20]);
    expect(lo).toBeCloseTo(9.4);
    expect(hi).toBeCloseTo(20.6);
    expect(yRange([0, 0], [0, 'auto'])).toEqual([0, 1]);
    expect(yRange([NaN], [0, 'auto'])[0]).toBe(0);
    expect(yRange([1, 2], [0, 'auto'], 5)[1]).toBeGreaterThanOrEqual(5);
  });
  it('paths: gaps break a line; a band goes out along hi and back along lo', () => {
    const sx = linear(0, 2, 0, 20);
    const sy = linear(0, 1, 10, 0);
    expect(linePath([0, 1, 2], [0, undefined, 1], sx, sy)).toBe('M0.0 10.0M20.0 0.0');
    expect(linePath([0, 1], [0, 1], sx, sy)).toBe('M0.0 10.0L10.0 0.0');
    expect(bandPath([0, 2], [0, 0], [1, 1], sx, sy)).toBe('M0.0 0.0L20.0 0.0L20.0 10.0L0.0 10.0Z');
  });
});

describe('chart summary for screen readers', () => {
  it("names each line's latest value, where it started and its range, over the iterations", async () => {
    const { chartSummary } = await import('./MetricChart.tsx');
    const pct = (v: number) => `${Math.round(v * 100)}%`;
    const spec = { title: 'Success rate', lines: [{ key: 'episode/success_rate' as const, label: 'success', color: '#000' }] };
    const data = [0.03, 0.5, 0.85, 0.82].map((v, i) => ({ it: i, 'episode/success_rate': v }));
    expect(chartSummary(spec, data, pct)).toBe('Success rate: success 82% (from 3%, range 3% to 85%) over 4 iterations');
    expect(chartSummary(spec, [{ it: 0 }], pct)).toBe('Success rate: no values over 1 iteration');
  });
});
