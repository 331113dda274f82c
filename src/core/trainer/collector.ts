/**
 * The two parts a Trainer is built from besides the learner (see ARCHITECTURE.md, 'One trainer'):
 *
 * - a **collector**, the rollout source of one env family and policy: the grid step pool
 *   (stepCollector.ts), the lockstep token loop (lockstepCollector.ts) or the continuous token
 *   loop (continuousCollector.ts). It collects one batch for the learner's version within the
 *   scheduler's staleness bound, turns the episodes into a RolloutBatch with their shaped rewards
 *   and what the advantage estimator needs, takes each new version, evaluates, and checkpoints,
 *   restores and releases its own state. ReMax's greedy baseline episodes are a collector option.
 * - a **scheduler** (scheduler.ts): the staleness bound (0 = synchronous), how far ahead a source
 *   may play, and the prompt pool.
 * - optionally an **objective** replacing the policy gradient (a distill stage's teacher KL).
 */
import type { IterationMetricInputs, SampledEpisode } from '../metrics/iterationMetrics.ts';
import type { Learner } from '../engine/types.ts';
import type { MetricRun } from '../metrics/lookup.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import type { PoolOutcome } from '../rollout/promptPool.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { Checkpoint, CheckpointTrainer } from '../runs/checkpoint.ts';
import type { AdvantageContext } from '../update/batchAdvantages.ts';
import type { RolloutBatch } from '../update/batch.ts';
import type { PositionScorer } from '../update/offPolicy.ts';
import type { Rng } from '../util/rng.ts';
import type { ScoredBatch, TrainedBatch } from './phases.ts';


/** ReMax's greedy baseline episodes of one batch: one per group, scored as the sampled ones. */
export interface GreedyBaselines {
  /** [groups] each greedy episode's total (shaped) reward. */
  totals: Float64Array;
  /** Env steps the greedy episodes took (counted in the iteration's compute). */
  envSteps: number;
  /** Share of greedy episodes that succeeded. */
  success: number;
}

/** The `remax/*` keys of an iteration with greedy baselines. */
export function greedyMetrics(g: GreedyBaselines): Record<string, number> {
  return {
    'remax/greedy_reward_mean': g.totals.reduce((a, b) => a + b, 0) / Math.max(1, g.totals.length),
    'remax/greedy_success_rate': g.success,
  };
}

/** Wall-clock marks of one iteration (performance.now() ms). */
export interface IterationTimes {
  /** step() began. */
  start: number;
  /** The collect phase returned. */
  collected: number;
  /** The update finished. */
  trained: number;
  /** The new version was synced. */
  synced: number;
}

/** What a collector hands the Trainer for one iteration. */
export interface Collected<E extends StepEpisode | TokenEpisode> {
  /** The trained episodes (group-major for group algorithms); empty: nothing to train on. */
  episodes: E[];
  /** Their rollout batch (the phases' input), each episode's shaped reward (env reward + shaping + user terms) placed at its positions. */
  batch: RolloutBatch;
  /** What the advantage estimator needs beyond rewards (greedy totals, GiGPO's anchor states). */
  ctx: AdvantageContext;
  /** ReMax's baselines, when the collector played them. */
  greedy: GreedyBaselines | null;
  /** Every episode sampled this iteration, summarised for the metrics (dropped groups included). */
  sampled: readonly SampledEpisode[];
  /** Dynamic sampling's group statistics and the collect's own counts (batchMetrics' inputs). */
  groups: IterationMetricInputs['groups'];
  extra: IterationMetricInputs['extra'];
  /** With a prompt pool: each trained group's outcome, for its success estimates. */
  outcomes?: PoolOutcome[];
  /**
   * The collector's perf figures and own keys, once trained and synced; `sc`/`tr` are null when
   * an objective other than the policy gradient trained the batch (no phases ran).
   */
  metrics(sc: ScoredBatch | null, tr: TrainedBatch | null, t: IterationTimes): { perf: IterationMetricInputs['perf']; keys: Record<string, number> };
}

/**
 * A training objective other than the policy gradient that phases.ts runs: distillation onto a
 * teacher's distributions (tokenDistill.ts). It updates the learner on the collected batch and
 * reports its own keys; no advantages, no off-policy weights.
 */
export interface Objective<E extends StepEpisode | TokenEpisode> {
  /** The update of one iteration: train steps taken, whether all applied, the objective's metrics. */
  train(learner: Learner, c: Collected<E>): Promise<{ steps: number; allApplied: boolean; metrics: Record<string, number> }>;
  /** Frees what it holds (teacher runners). */
  release(): Promise<void>;
}

/**
 * A collect that left nothing to train on (every group dropped by dynamic sampling): the metrics
 * of what was sampled. The iteration then ends without an update or a new version.
 */
export interface Skipped {
  skipped: Record<string, number>;
}

/** A rollout source and its timing, for one env family and policy (see the file comment). */
export interface Collector<E extends StepEpisode | TokenEpisode> {
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
  /** Collects the batch of iteration `iteration` for learner version `version`. */
  collect(iteration: number, version: number): Promise<Collected<E> | Skipped>;
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

