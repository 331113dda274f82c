import { describe, expect, it } from 'vitest';
import { boundHistory } from './liveHistory.ts';

describe('boundHistory', () => {
  it('leaves a history at or under the cap alone', () => {
    const xs = [0, 1, 2, 3, 4];
    boundHistory(xs, 5, 2);
    expect(xs).toEqual([0, 1, 2, 3, 4]);
  });

  it('thins the older part to every other point and keeps the recent ones whole', () => {
    const xs = Array.from({ length: 11 }, (_, i) => i);
    boundHistory(xs, 10, 3);
    // Older 8 points (0..7) → 0, 2, 4, 6; the last 3 (8, 9, 10) stay.
    expect(xs).toEqual([0, 2, 4, 6, 8, 9, 10]);
  });

  it('stays under the cap forever while points keep arriving, with the first and the latest points kept', () => {
    const xs: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      xs.push(i);
      boundHistory(xs, 500, 100);
      expect(xs.length).toBeLessThanOrEqual(500);
    }
    expect(xs[0]).toBe(0);
    expect(xs.slice(-100)).toEqual(Array.from({ length: 100 }, (_, i) => 99_900 + i));
    // Increasing: thinning never reorders.
    expect(xs.every((x, i) => i === 0 || x > xs[i - 1])).toBe(true);
  });
});
