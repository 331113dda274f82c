/**
 * Shared pieces of the trainers: the step-env run configuration, the per-iteration report,
 * live hyperparameters, seed mixing, and the mapping from an AlgoConfig to the ONNX
 * train-step options (one place, so every trainer builds the same loss and optimizer).
 */
import type { AlgoConfig } from '../algos/config.ts';
import type { IterationMetrics } from '../algos/metrics.ts';
import type { TrainStepOptions } from '../graph/train.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { DEFAULT_SHAPING, SHAPING_TERMS, type ShapingConfig, type ShapingSchedule, type ShapingWeights } from '../reward/shaping.ts';
import type { StepEpisode } from './stepEpisode.ts';

export interface MlpModelConfig {
  kind: 'mlp';
  /** Hidden layer widths, input side first. */
  hidden: number[];
  /** Hidden nonlinearity: tanh is smoother for small policy nets (CleanRL's choice). */
  activation: 'tanh' | 'relu';
}

export interface StepTrainerConfig {
  /** Env registry id and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  model: MlpModelConfig;
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** Progressive shaping: stages with their own weights (seed 002); null = fixed weights. */
  schedule?: ShapingSchedule | null;
  /** Groups per iteration for group algorithms (each groupSize episodes from one seed). */
  groups: number;
  /** Episodes per iteration for REINFORCE and PPO (distinct seeds). */
  episodes: number;
  /** Rows per train step (static graph batch); an iteration uses ⌈steps / batch⌉ steps per epoch. */
  learnerBatch: number;
  /** Master seed: weights, env seeds and sampling all derive from it. */
  seed: number;
}

export const DEFAULT_STEP_TRAINER: Omit<StepTrainerConfig, 'env' | 'algo'> = {
  model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 32,
  learnerBatch: 512,
  seed: 0,
};

export interface IterationReport {
  iteration: number;
  metrics: IterationMetrics & Record<string, number>;
  /** The batch's episodes (for the group view and the trajectory inspector). */
  episodes: StepEpisode[];
  /** Per-episode total (shaped) reward and advantage, parallel to `episodes`. */
  episodeRewards: Float64Array;
  episodeAdvantages: Float64Array;
  /** False when the NaN guard skipped at least one update this iteration. */
  allApplied: boolean;
}

/** Hyperparameters that may change while training runs (applied from the next train step). */
export interface LiveHyper {
  lr?: number;
  entropyCoef?: number;
  clipLow?: number;
  clipHigh?: number;
  klCoef?: number;
  /**
   * Shaping term weights (non-negative magnitudes, as in ShapingConfig): replace the base
   * config's weights from the next iteration's rewards on. Under a progressive schedule the
   * current stage's own weights still take precedence, as they do over the config's.
   */
  rewardWeights?: Partial<ShapingWeights>;
}

/** Hash of small integers into a 31-bit seed (distinct iterations/groups get unrelated seeds). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return (h >>> 0) & 0x7fffffff;
}

/**
 * The train-step graph options an algorithm config implies: the clipped PG loss (clip-higher,
 * KL to the reference as a loss term when klMode is 'loss', entropy bonus, value loss for
 * value-head models) and AdamW with global-norm clipping.
 */
export function trainStepOptions(algo: AlgoConfig, batch: number): TrainStepOptions {
  return {
    batch,
    loss: {
      kind: 'policy-gradient',
      clipLow: algo.clipLow,
      clipHigh: algo.clipHigh,
      useReference: algo.klCoef > 0 && algo.klMode === 'loss',
      klCoef: algo.klCoef,
      klEstimator: algo.klEstimator,
      entropyCoef: algo.entropyCoef,
      valueCoef: algo.valueCoef,
      valueClip: algo.valueClip,
    },
    adam: { lr: algo.lr, beta1: algo.adamBeta1, beta2: algo.adamBeta2, eps: algo.adamEps, weightDecay: algo.weightDecay, maxGradNorm: algo.maxGradNorm ?? 0 },
  };
}

/** Applies live hyperparameter changes to a learner's scalar inputs (from the next step on). */
export function applyLiveHyper(hyper: Record<string, number>, h: LiveHyper): void {
  if (h.lr !== undefined) hyper.lr = h.lr;
  if (h.entropyCoef !== undefined) hyper.entropy_coef = h.entropyCoef;
  if (h.clipLow !== undefined) hyper.clip_low = h.clipLow;
  if (h.clipHigh !== undefined) hyper.clip_high = h.clipHigh;
  if (h.klCoef !== undefined && 'kl_coef' in hyper) hyper.kl_coef = h.klCoef;
}

/**
 * `shaping` with live weight edits applied: a new config (the input is not modified); only
 * weights change, not length.freeTokens or potential.gamma. `potentialRecorded` says whether
 * the run records Φ(s) per step: without it a non-zero potential weight cannot be honoured.
 */
export function withShapingWeights(shaping: ShapingConfig, w: Partial<ShapingWeights>, potentialRecorded: boolean): ShapingConfig {
  const out = structuredClone(shaping);
  for (const [term, v] of Object.entries(w) as [string, number | undefined][]) {
    if (v === undefined) continue;
    if (!(SHAPING_TERMS as readonly string[]).includes(term)) throw new RangeError(`rewardWeights.${term}: not a shaping term (${SHAPING_TERMS.join(', ')})`);
    if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`rewardWeights.${term}: must be a finite number ≥ 0 (penalties are already negative; the weight is a magnitude), got ${v}`);
    if (term === 'potential' && v !== 0 && !potentialRecorded) {
      throw new RangeError('rewardWeights.potential: this run does not record potentials Φ(s) (it started with the term off); restart with a non-zero potential weight');
    }
    out[term as keyof ShapingConfig].weight = v;
  }
  return out;
}

/**
 * Held-out evaluation seeds: 2,000,000,000 + i. Training seeds are 31-bit hashes of (seed,
 * iteration, group) and imitation seeds come from their own hashed stream, so these are unseen
 * by convention (a collision would need a hash to land in this narrow range), and every run,
 * the CLI's --eval and the learn bench alike, scores the same tasks.
 */
export function heldOutSeeds(n: number): number[] {
  return Array.from({ length: n }, (_, i) => 2_000_000_000 + i);
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Share of distinct action sequences among the batch's episodes (exploration, invariant 1). */
export function distinctRatio(episodes: readonly { actions: Int32Array }[]): number {
  if (episodes.length === 0) return 0;
  const seen = new Set<string>();
  for (const ep of episodes) seen.add(ep.actions.join(','));
  return seen.size / episodes.length;
}
