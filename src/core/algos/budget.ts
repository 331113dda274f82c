/**
 * Adaptive rollout budget (Knapsack RL, Li et al. 2025; RL-ADA): under a fixed number of
 * episodes per iteration, give more episodes to prompts whose outcome is uncertain and fewer
 * (or none) to prompts the policy always solves or always fails. A group whose rewards are all
 * equal gets GRPO advantage 0 for every member, so an episode spent on a solved or hopeless
 * prompt is mostly an episode with no gradient.
 *
 * Prompts come from a finite pool (`pool` env seeds). Each prompt keeps a Beta posterior over
 * its success probability p from its past groups (decayed each iteration, since those outcomes
 * came from older policies). Each iteration takes the `groups` prompts of the pool with the
 * largest p(1 − p) (`selectPrompts`: unseen ones count 0.5, and a solved or hopeless prompt's
 * estimate drifts back toward 0.5 as its counts decay, so it is retried later), then splits the
 * episodes among them by a small knapsack: the value of giving n episodes to a prompt with
 * success probability p is
 *
 *     v(n, p) = p(1 − p) · (1 − pⁿ − (1 − p)ⁿ)
 *
 * the Bernoulli variance (the size of the gradient a mixed group carries) times the chance that
 * n samples are not all equal (that the group carries one at all). v is concave in n for n ≥ 1,
 * so handing out episodes greedily by marginal value per episode is optimal; a prompt starts
 * at `minPerPrompt` episodes (a group of 1 has no spread) or gets none.
 *
 * Everything here is pure; the scheduler's prompt pool (rollout/promptPool.ts) owns the state.
 */

export interface RolloutBudgetConfig {
  /** 'uniform' = every prompt of the batch gets algo.groupSize episodes; 'adaptive' = episodes go where outcomes are uncertain (same total). */
  mode: 'uniform' | 'adaptive';
  /** Prompts in the training pool (distinct env seeds, cycled through); 0 = a fresh prompt for every group (uniform only). */
  pool: number;
  /** Adaptive: fewest episodes a chosen prompt gets (≥ 2: a group of one has no spread). */
  minPerPrompt: number;
  /** Adaptive: most episodes one prompt gets in an iteration. */
  maxPerPrompt: number;
  /** Per-iteration decay of every prompt's success/failure counts (1 = never forget): old outcomes come from older policies. */
  decay: number;
}

export const ROLLOUT_BUDGET_DEFAULTS: RolloutBudgetConfig = { mode: 'uniform', pool: 0, minPerPrompt: 2, maxPerPrompt: 16, decay: 0.9 };

/** Per-prompt evidence: decayed counts of successful and failed episodes, [pool] each. */
export interface PromptStats {
  successes: Float64Array;
  failures: Float64Array;
}

export function initPromptStats(pool: number): PromptStats {
  return { successes: new Float64Array(pool), failures: new Float64Array(pool) };
}

/** Posterior mean of p under a Beta(1, 1) prior: (s + 1) / (s + f + 2); 0.5 for an unseen prompt. */
export function successEstimate(stats: PromptStats, i: number): number {
  return (stats.successes[i] + 1) / (stats.successes[i] + stats.failures[i] + 2);
}

/**
 * Decays every prompt's counts by `decay`, then adds this iteration's outcomes. Pure.
 * @param outcomes per trained group: its prompt index and its episodes' successes.
 */
export function updatePromptStats(stats: PromptStats, outcomes: readonly { prompt: number; successes: number; episodes: number }[], decay: number): PromptStats {
  const s = stats.successes.map((x) => x * decay);
  const f = stats.failures.map((x) => x * decay);
  for (const o of outcomes) {
    s[o.prompt] += o.successes;
    f[o.prompt] += o.episodes - o.successes;
  }
  return { successes: s, failures: f };
}

/** v(n, p) = p(1 − p)(1 − pⁿ − (1 − p)ⁿ): expected gradient signal of n episodes on a prompt of success probability p (0 for n = 0). */
export function allocationValue(n: number, p: number): number {
  if (n <= 0) return 0;
  return p * (1 - p) * (1 - p ** n - (1 - p) ** n);
}

/**
 * Splits `total` episodes over prompts with success estimates `p` (one per prompt): every
 * prompt gets 0 or between `min` and `max` episodes, Σ = total exactly. Greedy by marginal value
 * per episode (a new prompt's first move costs `min` episodes at v(min)/min each); ties go to the
 * lower index, so the result is deterministic. When no move fits (every started prompt is at
 * `max` and fewer than `min` episodes are left, or no prompt is free), the rest goes to started
 * prompts beyond `max`: the total is the invariant.
 * @returns [p.length] episodes per prompt.
 */
export function allocateBudget(p: readonly number[], total: number, min: number, max: number): Int32Array {
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`allocateBudget: total must be a whole number ≥ 0, got ${total}`);
  if (!Number.isInteger(min) || min < 1 || !Number.isInteger(max) || max < min) throw new RangeError(`allocateBudget: need 1 ≤ min ≤ max (whole numbers), got min ${min}, max ${max}`);
  if (total > 0 && p.length === 0) throw new RangeError('allocateBudget: no prompts to give episodes to');
  const n = new Int32Array(p.length);
  let left = total;
  while (left > 0) {
    let best = -1, bestGain = -Infinity;
    for (let i = 0; i < p.length; i++) {
      const cost = n[i] === 0 ? min : 1;
      if (cost > left || n[i] + cost > max) continue;
      const gain = (allocationValue(n[i] + cost, p[i]) - allocationValue(n[i], p[i])) / cost;
      if (gain > bestGain) {
        best = i;
        bestGain = gain;
      }
    }
    if (best < 0) {
      // No move fits: top up the started prompt with the best marginal value, past max.
      for (let i = 0; i < p.length; i++) {
        if (n[i] === 0) continue;
        const gain = allocationValue(n[i] + 1, p[i]) - allocationValue(n[i], p[i]);
        if (gain > bestGain) {
          best = i;
          bestGain = gain;
        }
      }
      if (best < 0) best = 0; // total < min with nothing started: one undersized group
      n[best] += 1;
      left -= 1;
      continue;
    }
    const cost = n[best] === 0 ? min : 1;
    n[best] += cost;
    left -= cost;
  }
  return n;
}

/**
 * The `k` prompts with the largest p(1 − p) (the most uncertain), ascending index order; ties go
 * to the lower index. Choosing as many prompts as uniform allocation would keeps the groups per
 * iteration equal (spreading the episodes over many prompts instead gives small groups, and a
 * group of 3 is all-equal far more often than one of 8).
 */
export function selectPrompts(p: readonly number[], k: number): number[] {
  const order = p.map((x, i) => ({ i, u: x * (1 - x) })).sort((a, b) => b.u - a.u || a.i - b.i);
  return order
    .slice(0, Math.max(0, k))
    .map((o) => o.i)
    .sort((a, b) => a - b);
}

/** A prompt counts as uncertain when its estimate lies in [0.2, 0.8] (p(1 − p) ≥ 0.16). */
export const UNCERTAIN_LOW = 0.2;
export const UNCERTAIN_HIGH = 0.8;

export interface BudgetStats {
  /** `budget/prompts`: prompts (groups) sampled this iteration. */
  prompts: number;
  /** `budget/episodes_per_group_max` and `_min`. */
  episodesPerGroupMax: number;
  episodesPerGroupMin: number;
  /** `budget/uncertain_share`: share of the iteration's episodes given to prompts whose estimate (before the iteration) was in [0.2, 0.8]. */
  uncertainShare: number;
  /** `budget/zero_std_episode_share`: share of the iteration's episodes in groups whose rewards were all equal (spent without gradient). */
  zeroStdEpisodeShare: number;
  /** `budget/pool_success_est`: mean success estimate over the pool after the update (unseen prompts count 0.5). */
  poolSuccessEst: number;
}

/**
 * The `budget/*` metrics of one iteration.
 * @param groups per sampled group: its prompt, its size, whether its rewards had spread.
 * @param before the estimates the allocation used; `after` the updated stats.
 */
export function budgetStats(groups: readonly { prompt: number; size: number; spread: boolean }[], before: PromptStats, after: PromptStats): BudgetStats {
  let total = 0, uncertain = 0, zero = 0, max = 0, min = Infinity;
  for (const g of groups) {
    total += g.size;
    max = Math.max(max, g.size);
    min = Math.min(min, g.size);
    const p = successEstimate(before, g.prompt);
    if (p >= UNCERTAIN_LOW && p <= UNCERTAIN_HIGH) uncertain += g.size;
    if (!g.spread) zero += g.size;
  }
  let est = 0;
  for (let i = 0; i < after.successes.length; i++) est += successEstimate(after, i);
  return {
    prompts: groups.length,
    episodesPerGroupMax: max,
    episodesPerGroupMin: groups.length ? min : 0,
    uncertainShare: total ? uncertain / total : 0,
    zeroStdEpisodeShare: total ? zero / total : 0,
    poolSuccessEst: after.successes.length ? est / after.successes.length : 0,
  };
}
