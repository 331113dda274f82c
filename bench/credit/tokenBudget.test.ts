import { describe, expect, it } from 'vitest';
import { atEqualTokens, firstReach, type Iter } from './tokenBudget.ts';

// Hand-worked runs: A spends 100 tokens an iteration, B 150; B's 3 iterations (450) set the budget.
const A: Iter[] = [
  { tokens: 100, episodes: 10, successes: 1 },
  { tokens: 100, episodes: 10, successes: 5 },
  { tokens: 100, episodes: 10, successes: 8 },
  { tokens: 100, episodes: 10, successes: 9 },
  { tokens: 100, episodes: 10, successes: 10 },
];
const B: Iter[] = [
  { tokens: 150, episodes: 12, successes: 3 },
  { tokens: 150, episodes: 12, successes: 6 },
  { tokens: 150, episodes: 12, successes: 12 },
];

describe('credit token budget', () => {
  it('cuts every run at the smallest total, whole iterations only', () => {
    const [a, b] = atEqualTokens([{ run: 'A', its: A }, { run: 'B', its: B }]);
    // A: 4 iterations fit in 450 (400 tokens), 40 episodes, 23 successes.
    expect(a).toMatchObject({ iterations: 4, tokens: 400, episodes: 40, successes: 23 });
    expect(a.episodesPerSuccess).toBeCloseTo(40 / 23, 12);
    expect(b).toMatchObject({ iterations: 3, tokens: 450, episodes: 36, successes: 21 });
  });

  it('firstReach counts the episodes and tokens through the first iteration at the rate', () => {
    // A reaches 0.8 at iteration 2 (8/10), after 30 episodes and 300 tokens; a cumulative rate
    // (14/30) or the iteration after would both give another answer.
    expect(firstReach(A, 0.8)).toEqual({ iteration: 2, episodes: 30, tokens: 300 });
    expect(firstReach(B, 0.5)).toEqual({ iteration: 1, episodes: 24, tokens: 300 });
    expect(firstReach(B.slice(0, 1), 0.5)).toBeNull();
  });
});
