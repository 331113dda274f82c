/**
 * What every trainer (the one `Trainer` of trainer.ts, or the staged wrapper over it) offers its
 * callers (the CLI, the browser's training worker, benches and tests), whichever env family,
 * policy and rollout scheduling it runs: one iteration at a time, held-out evaluation, live
 * hyperparameters, the current weights, and cleanup. Callers never need to know which they hold; `runTraining` (events.ts) turns `step()` into events.
 */
import type { IterationMetrics } from '../metrics/iterationMetrics.ts';
import type { BranchLink } from '../algos/treeAdvantages.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { LiveHyper } from '../update/hyper.ts';
import type { LensSample } from '../update/lensSample.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import type { RewardLab } from '../reward/userTerms.ts';

/** One trained iteration, as every trainer reports it. */
export interface IterationReport<E extends StepEpisode | TokenEpisode = StepEpisode | TokenEpisode> {
  iteration: number;
  metrics: IterationMetrics & Record<string, number>;
  /** The trained batch's episodes (group-major for group algorithms). */
  episodes: E[];
  /** Per-episode total (shaped) reward and advantage, parallel to `episodes`. */
  episodeRewards: Float64Array;
  episodeAdvantages: Float64Array<ArrayBufferLike>;
  /**
   * [episode][action] the advantage each action was trained with (the mean over its trained
   * positions: one value per turn for episode, step- and turn-level estimators), parallel to
   * `episodes`; absent where no advantage was computed (a distill stage).
   */
  episodeTurnAdvantages?: Float64Array[];
  /** Tree rollouts: which episodes branched from which, at which token (indices into `episodes`). */
  branches?: readonly BranchLink[];
  /** The loss lens's sample of trained positions (update/lensSample.ts); absent where no policy-gradient loss ran (a distill stage, a skipped batch). */
  lens?: LensSample;
  /** False when the NaN guard skipped at least one update this iteration. */
  allApplied: boolean;
}

export interface RunTrainer<E extends StepEpisode | TokenEpisode = StepEpisode | TokenEpisode> {
  /** The policy being trained (an MLP over grid features, or a token transformer). */
  readonly model: PolicyModel;
  /** Iterations trained so far. */
  readonly iteration: number;
  /** The learner's policy version (updates applied); rollouts record the version that acted. */
  readonly version: number;
  /** Collects (or takes) one batch, updates the policy, and reports the iteration. */
  step(): Promise<IterationReport<E>>;
  /** Plays one episode per seed with the current weights, without training (temperature 0 = greedy). */
  evaluate(seeds: readonly number[], temperature?: number): Promise<E[]>;
  /** Applies live hyperparameter edits from the next train step on; throws on an invalid edit. */
  setHyper(h: LiveHyper): void;
  /**
   * User reward terms (reward lab) from the next iteration on, null = none: the live Apply of new
   * reward code. The caller owns the scorer and closes the one it replaces.
   */
  setRewardLab(lab: RewardLab | null): void;
  /** A copy of the learner's current weights. */
  getWeights(): Promise<Weights>;
  /**
   * True when checkpoint() and restore() work: every trainer here (Trainer, StagedTrainer); a
   * stand-in without them says false, and the CLI and the tab then keep none.
   */
  readonly canCheckpoint: boolean;
  /** The full state after the last finished iteration (runs/checkpoint.ts); call between steps. */
  checkpoint(): Promise<Checkpoint>;
  /**
   * Continues from `checkpoint` (written by a trainer of the same config): only on a fresh
   * trainer, before its first step(). Throws, changing nothing, on a checkpoint of another model.
   */
  restore(checkpoint: Checkpoint): Promise<void>;
  /** Frees sessions, workers and pools; the trainer is unusable afterwards. */
  release(): Promise<void>;
}

/** What `runTraining` needs of a trainer (any Trainer, or a scripted stand-in in tests). */
export interface SteppableTrainer {
  step(): Promise<{
    iteration: number;
    metrics: Record<string, number>;
    episodes: readonly (StepEpisode | TokenEpisode)[];
    episodeRewards: ArrayLike<number>;
    episodeAdvantages: ArrayLike<number>;
    allApplied: boolean;
  }>;
}
