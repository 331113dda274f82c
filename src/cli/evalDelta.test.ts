import { describe, expect, it } from 'vitest';
import { fixedBroke } from './evalDelta.ts';

describe('fixedBroke', () => {
  it('counts seeds that flipped each way, by seed (not by position), and refuses a seed missing before', () => {
    const before = [{ seed: 1, success: false }, { seed: 2, success: true }, { seed: 3, success: false }, { seed: 4, success: true }];
    // Listed in another order: seed 3 fixed, seed 4 broke, 1 still failing, 2 still solved.
    const after = [{ seed: 4, success: false }, { seed: 3, success: true }, { seed: 2, success: true }, { seed: 1, success: false }];
    expect(fixedBroke(before, after)).toEqual({ fixed: 1, broke: 1 });
    expect(() => fixedBroke(before, [{ seed: 9, success: true }])).toThrow(/seed 9 was evaluated after RL but not before/);
  });
});
