/**
 * The prompt pool of a tool run (rollout.budget.pool > 0): a fixed set of prompts (env seeds)
 * whose success is tracked across iterations, and the plan of which prompts each iteration rolls
 * out with how many episodes (algos/budget.ts: uncertain prompts first, a knapsack split of the
 * episode budget). A rollout option of the continuous token loop, kept out of its scheduler.
 */
import { allocateBudget, budgetStats, initPromptStats, selectPrompts, successEstimate, updatePromptStats, type PromptStats, type RolloutBudgetConfig } from '../algos/budget.ts';
import { hasSpread } from '../algos/sampling.ts';
import { mixSeed } from '../util/rng.ts';

/** One group to admit: a prompt of the pool and its episodes. */
export interface PlannedGroup {
  prompt: number;
  size: number;
}

/** A trained group, as the pool counts it. */
export interface PoolOutcome {
  prompt: number;
  size: number;
  successes: number;
  episodes: number;
  rewards: readonly number[];
}

export class PromptPool {
  /** Per-prompt success evidence (decayed counts). */
  stats: PromptStats;

  constructor(
    private readonly budget: RolloutBudgetConfig,
    /** The run's master seed (prompt seeds derive from it). */
    private readonly seed: number,
  ) {
    this.stats = initPromptStats(budget.pool);
  }

  /** Env seed of prompt `i` of the pool: fixed for the run, so outcomes on it can be counted. */
  promptSeed(i: number): number {
    return mixSeed(this.seed, 0xb0d, i);
  }

  /**
   * Iteration `iteration`'s groups. Uniform: the next `groups` prompts in pool order (cycling),
   * `groupSize` episodes each. Adaptive: the `groups` most uncertain prompts of the pool
   * (selectPrompts), groups × groupSize episodes split among them by their success estimates
   * (allocateBudget; a prompt may get none).
   */
  plan(iteration: number, groups: number, groupSize: number): PlannedGroup[] {
    const b = this.budget;
    if (b.mode === 'uniform') return Array.from({ length: groups }, (_, g) => ({ prompt: (iteration * groups + g) % b.pool, size: groupSize }));
    const p = Array.from({ length: b.pool }, (_, i) => successEstimate(this.stats, i));
    const chosen = selectPrompts(p, groups);
    const n = allocateBudget(chosen.map((i) => p[i]), groups * groupSize, b.minPerPrompt, b.maxPerPrompt);
    const out: PlannedGroup[] = [];
    n.forEach((size, j) => {
      if (size > 0) out.push({ prompt: chosen[j], size });
    });
    return out;
  }

  /**
   * Counts a trained batch's outcomes into the prompts' estimates (episode success, decayed by
   * rollout.budget.decay) and returns the `budget/*` metrics.
   * @param spreadTol dynamic sampling's tolerance for "no spread" (a zero-std group).
   */
  record(batch: readonly PoolOutcome[], spreadTol: number): Record<string, number> {
    const before = this.stats;
    this.stats = updatePromptStats(before, batch.map((g) => ({ prompt: g.prompt, successes: g.successes, episodes: g.episodes })), this.budget.decay);
    const b = budgetStats(batch.map((g) => ({ prompt: g.prompt, size: g.size, spread: hasSpread(g.rewards, spreadTol) })), before, this.stats);
    return {
      'budget/prompts': b.prompts,
      'budget/episodes_per_group_max': b.episodesPerGroupMax,
      'budget/episodes_per_group_min': b.episodesPerGroupMin,
      'budget/uncertain_share': b.uncertainShare,
      'budget/zero_std_episode_share': b.zeroStdEpisodeShare,
      'budget/pool_success_est': b.poolSuccessEst,
    };
  }

  /** The counts a checkpoint holds. */
  state(): { successes: number[]; failures: number[] } {
    return { successes: [...this.stats.successes], failures: [...this.stats.failures] };
  }

  /** Throws unless `st` holds counts for a pool of this size (a checkpoint's, before restoring anything). */
  checkState(st: { successes: readonly number[] } | undefined, who: string): void {
    if (st?.successes.length !== this.stats.successes.length) {
      throw new Error(`${who}: prompts must hold ${this.stats.successes.length} counts each (rollout.budget.pool), got ${st?.successes.length ?? 'none'}`);
    }
  }

  /** Restores `state()`'s counts (checked by checkState). */
  setState(st: { successes: readonly number[]; failures: readonly number[] }): void {
    this.stats = { successes: Float64Array.from(st.successes), failures: Float64Array.from(st.failures) };
  }
}
