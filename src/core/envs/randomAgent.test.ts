import { describe, expect, it } from 'vitest';
import { makeEnv } from './index.ts';
import { firstSeeds, randomAgent } from './randomAgent.ts';
import { mapToKwargs, DEFAULT_MAP } from './grid/mapSpec.ts';

describe('randomAgent', () => {
  it('solves a one-step map about 1/7 of the time (only forward, one of 7 actions, wins)', () => {
    const env = makeEnv('grid/custom', mapToKwargs({ ...DEFAULT_MAP, rows: ['####', '#>G#', '####'], maxSteps: 1 }));
    const r = randomAgent(env, firstSeeds(2000));
    // Binomial(2000, 1/7): sd = sqrt(p(1-p)/n) ≈ 0.0078; 4 sd either side.
    expect(Math.abs(r.successRate - 1 / 7)).toBeLessThan(0.032);
    expect(r.meanSteps).toBe(1);
    expect(r.meanReturn).toBeCloseTo(r.successRate * (1 - 0.9), 12);
  });

  it('never solves a map whose goal lies beyond the step limit, and is reproducible', () => {
    const env = makeEnv('grid/custom', mapToKwargs({ ...DEFAULT_MAP, rows: ['######', '#>..G#', '######'], maxSteps: 2 }));
    expect(randomAgent(env, firstSeeds(100))).toEqual({ episodes: 100, successRate: 0, meanSteps: 2, meanReturn: 0 });
    const a = randomAgent(makeEnv('grid/four-rooms'), firstSeeds(20));
    const b = randomAgent(makeEnv('grid/four-rooms'), firstSeeds(20));
    expect(a).toEqual(b);
  });
});
