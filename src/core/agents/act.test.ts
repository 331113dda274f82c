import { describe, expect, it } from 'vitest';
import { chooseAgentAction } from './act.ts';

const logp = (ps: number[]) => ps.map(Math.log);

describe('chooseAgentAction', () => {
  it('greedy takes the most likely action and reports the probabilities', () => {
    const c = chooseAgentAction(logp([0.1, 0.6, 0.3]), 'greedy', 5, 0);
    expect(c.action).toBe(1);
    expect(c.probs.map((p) => Number(p.toFixed(6)))).toEqual([0.1, 0.6, 0.3]);
  });

  it('sampling follows the probabilities and replays the same draw for the same seed and step', () => {
    const counts = [0, 0, 0];
    for (let step = 0; step < 3000; step++) counts[chooseAgentAction(logp([0.2, 0.5, 0.3]), 'sampled', 7, step).action]++;
    expect(counts[0] / 3000).toBeCloseTo(0.2, 1);
    expect(counts[1] / 3000).toBeCloseTo(0.5, 1);
    expect(counts[2] / 3000).toBeCloseTo(0.3, 1);
    const again = Array.from({ length: 50 }, (_, s) => chooseAgentAction(logp([0.2, 0.5, 0.3]), 'sampled', 7, s).action);
    const first = Array.from({ length: 50 }, (_, s) => chooseAgentAction(logp([0.2, 0.5, 0.3]), 'sampled', 7, s).action);
    expect(again).toEqual(first);
    const otherSeed = Array.from({ length: 50 }, (_, s) => chooseAgentAction(logp([0.2, 0.5, 0.3]), 'sampled', 8, s).action);
    expect(otherSeed).not.toEqual(first);
  });
});
