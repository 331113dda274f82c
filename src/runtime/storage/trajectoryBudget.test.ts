/** The trajectory budget's stride, against cases worked by hand. */
import { describe, expect, it } from 'vitest';
import { strideToFit } from './trajectoryBudget.ts';

describe('strideToFit', () => {
  it('keeps the stride while saved + incoming fits', () => {
    expect(strideToFit([10, 11, 12, 13], 96, 1, 100)).toBe(1);
  });

  it('doubles until the thinned saved lines and the incoming ones on the stride fit', () => {
    // 100 saved + 4 > 100; stride 2: ceil(100 / 2) = 50 saved, iterations 10 and 12 kept: 52 ≤ 100.
    expect(strideToFit([10, 11, 12, 13], 100, 1, 100)).toBe(2);
    // max 30: stride 2 gives 50 + 2; stride 4 gives 25 + 1 (iteration 12): 26 ≤ 30.
    expect(strideToFit([10, 11, 12, 13], 100, 1, 30)).toBe(4);
  });

  it('thins what is saved relative to the stride it was saved at (not from stride 1)', () => {
    // Saved at stride 2: stride 4 keeps half of them, ceil(100 / 2) = 50, + iteration 8 = 51 > 40;
    // stride 8 keeps a quarter, 25 + 1 = 26. Counting from stride 1 would stop at 4 (25 + 1).
    expect(strideToFit([8, 10], 100, 2, 40)).toBe(8);
  });
});
