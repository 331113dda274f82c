/**
 * When batches may be collected relative to the learner, and which prompts they start from: the
 * scheduling decisions of every rollout source, in one object. A source asks it how far ahead it
 * may play and whether a position is still fresh enough to train; the Trainer asks it to plan
 * the prompts of a batch (with a prompt pool), to record their outcomes, and to check the bound.
 *
 *   sync              staleness 0: collect, then train, strictly alternating
 *   staleness bound   s ≥ 1: batches are played ahead, every trained position ≤ s versions old
 *   prompt pool       the adaptive rollout budget (rollout.budget.pool > 0; sync only): which
 *                     prompts a batch replays and how many episodes each gets
 */
import type { RolloutBudgetConfig } from '../algos/budget.ts';
import type { SchedulingPlan } from '../presets/plan.ts';
import { PromptPool, type PlannedGroup, type PoolOutcome } from '../rollout/promptPool.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';

export class Scheduler {
  constructor(
    /** Most policy versions between sampling a position and training on it (0 = synchronous). */
    readonly maxStaleness: number,
    /** The prompt pool (tool runs with rollout.budget.pool > 0; sync only), else null: fresh prompts. */
    readonly prompts: PromptPool | null = null,
  ) {
    if (!(Number.isInteger(maxStaleness) && maxStaleness >= 0)) throw new RangeError(`maxStaleness must be a whole number ≥ 0, got ${maxStaleness}`);
  }

  /** The last batch a source may start while the learner trains batch `iteration` (its version). */
  launchLimit(iteration: number): number {
    return iteration + this.maxStaleness;
  }

  /**
   * Groups a continuous source keeps admitted (in flight or finished, not yet trained) while it
   * waits for `need` of a batch of `perBatch`: just those needed when synchronous, else enough
   * for the batches the bound lets it play ahead.
   */
  openGroups(need: number, perBatch: number): number {
    return this.maxStaleness === 0 ? need : (1 + this.maxStaleness) * perBatch;
  }

  /** Whether a position sampled by version `sampledAt` may still be trained at version `at`. */
  fresh(sampledAt: number, at: number): boolean {
    return at - sampledAt <= this.maxStaleness;
  }

  /** The prompt pool's groups of batch `iteration` (prompt and size each), or undefined: fresh prompts. */
  plan(iteration: number, groups: number, groupSize: number): readonly PlannedGroup[] | undefined {
    return this.prompts?.plan(iteration, groups, groupSize);
  }

  /** Records a trained batch's outcomes in the prompt pool; its `budget/*` keys (none without a pool). */
  record(outcomes: readonly PoolOutcome[] | undefined, spreadTol: number): Record<string, number> {
    return this.prompts && outcomes ? this.prompts.record(outcomes, spreadTol) : {};
  }

  /** A bookkeeping check of the bound (a violation is a scheduler bug, not a data property). */
  checkBound(stalest: number, iteration: number): void {
    if (stalest > this.maxStaleness) throw new Error(`Trainer: batch ${iteration} has a position ${stalest} versions old (max ${this.maxStaleness})`);
  }

  /** Its part of a checkpoint: the prompt pool's success counts. */
  checkpoint(): Pick<Checkpoint, 'prompts'> {
    return this.prompts ? { prompts: this.prompts.state() } : {};
  }

  /** Checks `cp`'s prompt-pool state fits (throws, naming `who`), and returns the function that installs it. */
  prepareRestore(cp: Checkpoint, who: string): () => void {
    this.prompts?.checkState(cp.prompts, who);
    return () => {
      if (this.prompts && cp.prompts) this.prompts.setState(cp.prompts);
    };
  }
}

/** A scheduler of staleness bound `maxStaleness` (0 = synchronous), with an optional prompt pool. */
export function makeScheduler(maxStaleness: number, prompts: PromptPool | null = null): Scheduler {
  return new Scheduler(maxStaleness, prompts);
}

/**
 * The scheduler of a run with a rollout budget: the prompt pool when `budget.pool` > 0, which
 * plans every group's size before sampling, so it needs sync scheduling and no resampling.
 */
export function budgetScheduler(budget: RolloutBudgetConfig | undefined, maxStaleness: number, dynamicSampling: boolean, seed: number): Scheduler {
  if (budget && budget.pool > 0 && (maxStaleness !== 0 || dynamicSampling)) {
    throw new Error('a prompt pool (rollout.budget.pool > 0) needs sync scheduling (maxStaleness 0) and no dynamic sampling');
  }
  if (budget?.mode === 'adaptive' && budget.pool === 0) throw new Error('the adaptive budget needs a prompt pool (rollout.budget.pool ≥ 1)');
  return new Scheduler(maxStaleness, budget && budget.pool > 0 ? new PromptPool(budget, seed) : null);
}

/**
 * The scheduler of a rollout plan's scheduling (presets/plan.ts), for every way of playing:
 * absent fields are synchronous play (staleness 0) from fresh prompts.
 */
export function schedulerFor(s: Partial<SchedulingPlan> | undefined, dynamicSampling: boolean, seed: number): Scheduler {
  return budgetScheduler(s?.budget, s?.maxStaleness ?? 0, dynamicSampling, seed);
}
