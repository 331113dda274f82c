/**
 * A collector: the rollout source of one env family and policy (its `rollouts`, which the
 * Trainer's collect pipeline plays; collect.ts) inside its shell: readying each collect and
 * batching what was gathered, taking new weights, evaluating, checkpointing. The grid step pool
 * (stepCollector.ts), the lockstep token loop (lockstepCollector.ts) and the continuous token loop
 * (continuousCollector.ts) are the three.
 */
import type { AlgoConfig } from '../algos/config.ts';
import type { Learner } from '../engine/types.ts';
import type { MetricRun } from '../metrics/lookup.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { Checkpoint, CheckpointTrainer } from '../runs/checkpoint.ts';
import type { PositionScorer } from '../update/offPolicy.ts';
import type { Rng } from '../util/rng.ts';
import type { Gathered, PlayedGroup, RolloutSource } from './collect.ts';
import type { Collected, Skipped } from './collector.ts';

/** A rollout source and its timing, for one env family and policy (see the file comment). */
export interface Collector<E extends StepEpisode | TokenEpisode, G extends PlayedGroup<E> = PlayedGroup<E>> {
  /** Names the collector in checkpoints (`trainer`) and messages. */
  readonly kind: CheckpointTrainer;
  readonly model: PolicyModel;
  /** Which metric keys apply to its runs. */
  readonly metricRun: MetricRun;
  /** The minibatch shuffling stream (lockstep: shared with token sampling). */
  readonly rng: Rng;
  /** The KL reference policy (klCoef > 0), else null. */
  readonly reference: PositionScorer | null;
  /** π_prox for stale positions: a scorer, 'learner' when the train graph computes it, null when nothing can be stale. */
  readonly proximal: PositionScorer | 'learner' | null;
  /** The algorithm whose collection the pipeline serves (its groups, resampling, needs): the collector's own (a distill stage samples as REINFORCE). */
  readonly algo: AlgoConfig;
  /** What the Trainer's collect pipeline (collect.ts `gather`) plays, scores and asks for greedy episodes and state keys. */
  readonly rollouts: RolloutSource<E, G>;
  /**
   * Readies the collect of iteration `iteration` for learner version `version` (a step pool waits
   * for the batch launched ahead; a continuous loop asks the scheduler for the prompt pool's plan)
   * and returns the groups the batch holds: the pipeline's target.
   */
  begin(iteration: number, version: number): Promise<number>;
  /** The gathered iteration as the Trainer trains it: the rollout batch and the collector's metrics, or Skipped when every group was dropped. */
  finish(g: Gathered<E, G>): Collected<E> | Skipped;
  /** Takes version `version`'s weights (null: no update ran, the version stands). */
  sync(weights: Weights | null, version: number): Promise<void>;
  /** Plays one episode per seed with the current weights, without training (temperature 0 = greedy). */
  evaluate(seeds: readonly number[], temperature: number): Promise<E[]>;
  /** Its own part of a checkpoint (RNG streams, KL reference weights, group bookkeeping). */
  checkpoint(): Promise<Pick<Checkpoint, 'rng'> & Partial<Checkpoint>>;
  /**
   * Checks `cp` fits this collector (its kind, a fresh collector, the hyper names `learner`
   * takes, its streams and weights) and returns `cp` as it restores (older layouts upgraded).
   */
  checkRestore(cp: Checkpoint, learner: Learner, who: string): Checkpoint;
  /** Installs its part of `cp` (checked), and the learner's weights `w` at `cp`'s version. */
  restore(cp: Checkpoint, w: Weights): Promise<void>;
  /** Frees what it holds (pool, decoder, episode source, scorers); waits for collects in flight. */
  release(): Promise<void>;
}

