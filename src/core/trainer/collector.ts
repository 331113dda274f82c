/**
 * What a collector hands the Trainer, and the parts a Trainer is built from besides the learner
 * (see ARCHITECTURE.md, 'One trainer'):
 *
 * - a **collector**, the rollout source of one env family and policy: the grid step pool
 *   (stepCollector.ts), the lockstep token loop (lockstepCollector.ts) or the continuous token
 *   loop (continuousCollector.ts); its interface is in collectorShell.ts. The Trainer runs the collect pipeline (collect.ts) over its
 *   `rollouts` (play, score, greedy, state keys) for the learner's version within the scheduler's
 *   staleness bound; the collector readies each collect (`begin`), turns the gathered episodes
 *   into a RolloutBatch (`finish`), takes each new version, evaluates, and checkpoints, restores
 *   and releases its own state.
 * - a **scheduler** (scheduler.ts): the staleness bound (0 = synchronous), how far ahead a source
 *   may play, and the prompt pool.
 * - optionally an **objective** replacing the policy gradient (a distill stage's teacher KL).
 */
import type { IterationMetricInputs, SampledEpisode } from '../metrics/iterationMetrics.ts';
import type { Learner } from '../engine/types.ts';
import type { PoolOutcome } from '../rollout/promptPool.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { AdvantageContext } from '../update/batchAdvantages.ts';
import type { RolloutBatch } from '../update/batch.ts';
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
