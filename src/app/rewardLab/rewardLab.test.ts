import { describe, expect, it } from 'vitest';
import { EXAMPLE_TERMS, messageLine, useRewardLab } from './rewardLab.ts';

describe('reward lab page state', () => {
  it('reads the line a sandbox message names, for the editor marker', () => {
    expect(messageLine("reward term 'spin' (line 2) ran past its 100 ms limit per call")).toBe(2);
    expect(messageLine('reward module: the module exports no terms')).toBeNull();
  });

  it('starts from the built-in terms as examples, applied to nothing until Apply', () => {
    const s = useRewardLab.getState();
    expect(s.text).toBe(EXAMPLE_TERMS);
    expect(s.applied).toBe('');
    for (const name of ['progressBonus', 'stepCost', 'towardGoal']) expect(EXAMPLE_TERMS).toContain(name);
  });
});
