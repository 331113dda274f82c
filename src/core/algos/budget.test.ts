import { describe, expect, it } from 'vitest';
import { allocateBudget, allocationValue, budgetStats, initPromptStats, selectPrompts, successEstimate, updatePromptStats } from './budget.ts';
import { unequalGroupAdvantages } from './registry/index.ts';
import { DEFAULT_ALGO_CONFIG } from './config.ts';

describe('adaptive rollout budget', () => {
  it('values n episodes on a prompt as p(1−p)(1 − pⁿ − (1−p)ⁿ) (hand-worked)', () => {
    // p = 0.5: 0.25 · (1 − 0.25 − 0.25) = 0.125 for n = 2; 0.25 · (1 − 2/16) = 0.21875 for n = 4.
    expect(allocationValue(2, 0.5)).toBe(0.125);
    expect(allocationValue(4, 0.5)).toBe(0.21875);
    expect(allocationValue(0, 0.5)).toBe(0);
    // A solved prompt is worth nothing: p(1 − p) = 0.
    expect(allocationValue(8, 1)).toBe(0);
  });

  it('gives the episodes to the uncertain prompts, none to solved or hopeless ones (hand-worked)', () => {
    // Per-episode gains: p = 0.5 starts at v(2)/2 = 1/16 and its 3rd episode adds v(3) − v(2) = 1/16 too;
    // the 4th adds 1/32. p = 0.99 or 0.01 starts at p²(1−p)² ≈ 1e-4. Ties go to the lower index:
    // prompt 0 gets 2, then its 3rd (1/16, tie with prompt 3's start), prompt 3 gets 2 and a 3rd,
    // then the 4th of each (1/32). 8 episodes, all on the two uncertain prompts.
    expect(Array.from(allocateBudget([0.5, 0.99, 0.01, 0.5], 8, 2, 8))).toEqual([4, 0, 0, 4]);
    // Uniform would be [2, 2, 2, 2]: two groups that are almost surely all-equal.
  });

  it('picks the most uncertain prompts of the pool (hand-worked)', () => {
    // p(1 − p): 0.09, 0.25, 0.0099, 0.21, 0.25 → the two at 0.25 (indices 1, 4), then 0.21 (3).
    expect(selectPrompts([0.1, 0.5, 0.99, 0.7, 0.5], 3)).toEqual([1, 3, 4]);
    expect(selectPrompts([0.5, 0.5], 5)).toEqual([0, 1]);
  });

  it('respects the minimum and maximum per prompt, and keeps the total exact', () => {
    // max 2: [2, 2] then 1 episode left that no move fits: it tops up prompt 0 past max.
    expect(Array.from(allocateBudget([0.5, 0.5], 5, 2, 2))).toEqual([3, 2]);
    // Fewer episodes than the minimum: one undersized group rather than a lost episode.
    expect(Array.from(allocateBudget([0.3], 1, 2, 4))).toEqual([1]);
    // min 3: a prompt gets 0 or ≥ 3.
    const n = allocateBudget([0.5, 0.4, 0.6, 0.9, 0.2], 16, 3, 6);
    expect(n.reduce((a, b) => a + b, 0)).toBe(16);
    for (const x of n) expect(x === 0 || (x >= 3 && x <= 6)).toBe(true);
    expect(() => allocateBudget([0.5], 4, 3, 2)).toThrow(/min ≤ max/);
  });

  it('keeps a decayed Beta(1, 1) estimate per prompt (hand-worked)', () => {
    let st = initPromptStats(3);
    expect(successEstimate(st, 0)).toBe(0.5);
    // Prompt 0: 3 of 4 solved → (3 + 1) / (4 + 2) = 2/3. Prompt 2: 0 of 2 → 1/4.
    st = updatePromptStats(st, [{ prompt: 0, successes: 3, episodes: 4 }, { prompt: 2, successes: 0, episodes: 2 }], 0.5);
    expect(successEstimate(st, 0)).toBeCloseTo(2 / 3, 12);
    expect(successEstimate(st, 2)).toBeCloseTo(1 / 4, 12);
    // Next iteration, nothing new: counts halve. Prompt 0: (1.5 + 1) / (2 + 2) = 0.625.
    st = updatePromptStats(st, [], 0.5);
    expect(successEstimate(st, 0)).toBeCloseTo(0.625, 12);
    expect(successEstimate(st, 1)).toBe(0.5);
  });

  it('reports the budget metrics (hand-worked)', () => {
    const before = updatePromptStats(initPromptStats(2), [{ prompt: 1, successes: 8, episodes: 8 }], 1); // p̂₁ = 9/10
    const after = updatePromptStats(before, [{ prompt: 0, successes: 3, episodes: 6 }, { prompt: 1, successes: 2, episodes: 2 }], 1);
    const b = budgetStats([{ prompt: 0, size: 6, spread: true }, { prompt: 1, size: 2, spread: false }], before, after);
    expect(b.prompts).toBe(2);
    expect(b.episodesPerGroupMax).toBe(6);
    expect(b.episodesPerGroupMin).toBe(2);
    // Prompt 0 was at 0.5 (uncertain), prompt 1 at 0.9 (not): 6 of 8 episodes.
    expect(b.uncertainShare).toBe(0.75);
    expect(b.zeroStdEpisodeShare).toBe(0.25);
    // After: p̂₀ = 4/8 = 0.5, p̂₁ = 11/12.
    expect(b.poolSuccessEst).toBeCloseTo((0.5 + 11 / 12) / 2, 12);
  });
});

describe('advantages over groups of unequal size', () => {
  it('compare each episode with its own group (hand-worked)', () => {
    // Dr.GRPO (no std): group [1, 0] → mean 0.5 → ±0.5; group [1, 1, 1, 0] → mean 0.75.
    const dr = unequalGroupAdvantages({ ...DEFAULT_ALGO_CONFIG, algo: 'drgrpo' }, [1, 0, 1, 1, 1, 0], [2, 4]);
    expect(Array.from(dr)).toEqual([0.5, -0.5, 0.25, 0.25, 0.25, -0.75]);
    // RLOO: [1, 0] → 1 − 0, 0 − 1; [1, 1, 1, 0] → 1 − 2/3 (×3), 0 − 1.
    const rl = unequalGroupAdvantages({ ...DEFAULT_ALGO_CONFIG, algo: 'rloo' }, [1, 0, 1, 1, 1, 0], [2, 4]);
    expect(Array.from(rl).map((x) => +x.toFixed(12))).toEqual([1, -1, 0.333333333333, 0.333333333333, 0.333333333333, -1]);
    // GRPO: an all-equal group gets exactly 0 whatever its size.
    const g = unequalGroupAdvantages({ ...DEFAULT_ALGO_CONFIG, algo: 'grpo' }, [1, 1, 1, 0, 1], [3, 2]);
    expect(Array.from(g.subarray(0, 3))).toEqual([0, 0, 0]);
    expect(() => unequalGroupAdvantages({ ...DEFAULT_ALGO_CONFIG, algo: 'grpo' }, [1, 0], [3])).toThrow(/sum to 3/);
  });
});
