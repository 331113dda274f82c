import { describe, expect, it } from 'vitest';
import { remaxAdvantages } from './remax.ts';

describe('ReMax advantages', () => {
  it('subtract the group’s greedy reward (hand-worked)', () => {
    // Group 0: greedy failed (0), samples 1, 0 → +1, 0. Group 1: greedy solved (0.9), samples 0.8, 1 → −0.1, +0.1.
    const a = remaxAdvantages([1, 0, 0.8, 1], [0, 0.9], 2);
    expect(Array.from(a).map((x) => +x.toFixed(12))).toEqual([1, 0, -0.1, 0.1]);
  });
  it('refuses a baseline count that does not match the groups', () => {
    expect(() => remaxAdvantages([1, 0, 1], [0], 2)).toThrow(/3 rewards for 1 greedy baselines of groups of 2/);
  });
});
