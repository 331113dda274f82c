import { describe, expect, it } from 'vitest';
import { describe as stats, explainedVariance, maskedMean, std, variance } from './stats.ts';

describe('stats helpers', () => {
  it('sample std, min/max, masked mean', () => {
    // [2, 4, 4, 4, 5, 5, 7, 9]: mean 5, squared deviations sum 32, sample var 32/7.
    expect(variance([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(32 / 7, 12);
    expect(stats([3, -1, 2])).toEqual({ mean: 4 / 3, std: std([3, -1, 2]), min: -1, max: 3 });
    expect(std([5])).toBe(0);
    expect(maskedMean([1, 100, 3], [1, 0, 1])).toBe(2);
  });

  it('explained variance', () => {
    // target [1, 2, 4] (sample var 7/3), pred [1, 2, 3]: residual [0, 0, 1] (var 1/3) -> 1 − 1/7 = 6/7.
    expect(explainedVariance([1, 2, 3], [1, 2, 4])).toBeCloseTo(6 / 7, 12);
    expect(explainedVariance([1, 2, 4], [1, 2, 4])).toBe(1);
    // A constant prediction explains nothing: residual var = target var.
    expect(explainedVariance([0, 0, 0], [1, 2, 4])).toBeCloseTo(0, 12);
    expect(explainedVariance([1, 2], [3, 3])).toBeNaN();
  });
});
