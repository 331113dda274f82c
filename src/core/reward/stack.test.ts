import { describe, expect, it } from 'vitest';
import { stackTerms, termsOf } from './stack.ts';

describe('stacked reward terms', () => {
  const rows: Record<string, number>[] = [
    { it: 1, 'reward/mean': 0.3, 'reward/std': 1, 'reward/stepCost/mean': -0.2, 'reward/outcome/mean': 0.5, 'reward/progress/mean': 0 },
    { it: 2, 'reward/mean': 0.9, 'reward/stepCost/mean': -0.1, 'reward/outcome/mean': 0.8, 'reward/progress/mean': 0, 'reward/bonus/mean': 0.2 },
  ];

  it('lists the terms that contributed, the task outcome first, aggregates and all-zero terms left out', () => {
    expect(termsOf(rows)).toEqual(['outcome', 'stepCost', 'bonus']);
    expect(termsOf([])).toEqual([]);
  });

  it('stacks positive contributions above 0 and negative ones below, their sum the shaped reward', () => {
    const s = stackTerms(rows, ['outcome', 'stepCost', 'bonus']);
    const [outcome, stepCost, bonus] = s.bands;
    expect([outcome.lo, outcome.hi]).toEqual([[0, 0], [0.5, 0.8]]);
    expect([stepCost.lo, stepCost.hi]).toEqual([[-0.2, -0.1], [0, 0]]);
    // Missing in the first row: a zero-height band at the top of the positive stack.
    expect(bonus.lo[0]).toBe(0.5);
    expect(bonus.hi[0]).toBe(0.5);
    expect(bonus.lo[1]).toBeCloseTo(0.8, 12);
    expect(bonus.hi[1]).toBeCloseTo(1.0, 12);
    expect(s.total[0]).toBeCloseTo(rows[0]['reward/mean'], 12);
    expect(s.total[1]).toBeCloseTo(rows[1]['reward/mean'], 12);
    expect(s.min).toBeCloseTo(-0.2, 12);
    expect(s.max).toBeCloseTo(1.0, 12);
  });

  it('counts a non-finite value as nothing', () => {
    const s = stackTerms([{ 'reward/a/mean': NaN, 'reward/b/mean': 1 }], ['a', 'b']);
    expect(s.bands[0].hi[0]).toBe(0);
    expect(s.bands[1].hi[0]).toBe(1);
    expect(s.total[0]).toBe(1);
  });
});
