/**
 * Everything after collect, sequenced once for every trainer: score (KL reward) → advantages →
 * aggregation weights, then off-policy weights/TIS → update → IS ratios. Each phase is a function
 * over the rollout batch (update/); the trainers only build the batch from their episodes and
 * decide timing.
 */
import type { AlgoConfig } from '../algos/config.ts';
import type { EmaBaselineState } from '../algos/advantages.ts';
import type { TisResult } from '../update/importanceWeights.ts';
import type { Learner } from '../engine/types.ts';
import type { Rng } from '../util/rng.ts';
import { aggregationWeightsOf, computeAdvantages, klRewardPenalty, valueTargets, type AdvantageContext, type BatchAdvantages } from '../update/batchAdvantages.ts';
import type { RolloutBatch } from '../update/batch.ts';
import { withOwnRewards } from '../update/positionRewards.ts';
import { applyOverlong, truncationMaskedWeights } from '../update/lengthControl.ts';
import { isRatios, offPolicyWeights, type OffPolicy, type PositionScorer } from '../update/offPolicy.ts';
import { runUpdate, type UpdateResult } from '../update/update.ts';
import { lensSample, type LensSample } from '../update/lensSample.ts';
import { rolloutCorrection } from '../update/rolloutCorrection.ts';
import type { CorrectionMetrics } from '../algos/correction/metrics.ts';

export interface ScoredBatch {
  /** The batch with its own rewards and scores after the KL penalty (klMode 'reward') and DAPO's overlong term. */
  batch: RolloutBatch;
  /** [n] episode rewards after the KL penalty (the batch's scores). */
  totals: Float64Array;
  /** [size] the reference's log-probs (klCoef > 0), else null. */
  refLogp: Float32Array | null;
  adv: BatchAdvantages;
  /** [size] aggregation weights. */
  weights: Float64Array;
}

/**
 * Score (KL reward, DAPO's overlong term) → advantages → weights (truncated episodes left out
 * with maskTruncated, update/lengthControl.ts). `batch` carries its placed rewards (env reward +
 * shaping + user terms, update/positionRewards.ts); the penalties land on a copy of them, so the
 * placed rewards stay as scored.
 * @param ctx what the estimator needs beyond the batch (group sizes, ReMax's greedy rewards, GiGPO's states).
 */
export async function scoreBatch(algo: AlgoConfig, placed: RolloutBatch, reference: PositionScorer | null, ema: EmaBaselineState, ctx: AdvantageContext): Promise<ScoredBatch> {
  const batch = withOwnRewards(placed);
  const refLogp = reference && algo.klCoef > 0 && batch.n > 0 ? await reference.logprobsAt(batch) : null;
  if (refLogp && algo.klMode === 'reward') klRewardPenalty(batch, refLogp, algo);
  applyOverlong(batch, algo);
  const adv = computeAdvantages(algo, batch, ema, ctx);
  return { batch, totals: batch.scores, refLogp, adv, weights: truncationMaskedWeights(batch, aggregationWeightsOf(batch, algo), algo) };
}

export interface TrainedBatch {
  off: OffPolicy;
  upd: UpdateResult;
  /** IS ratios π_prox/μ for the metrics. */
  tis: TisResult;
  /** Seconds spent on the off-policy weights (a proximal forward pass over stale sequences). */
  offS: number;
  /** The rollout correction's correction/* keys, when algo.rolloutCorrection is on. */
  correction?: CorrectionMetrics;
  /** The loss lens's sample: each trained position's log-ratio at the step that trained it, and its advantage. */
  lens: LensSample;
}

/**
 * Off-policy weights/TIS → update. `proximal`: the scorer of π_prox, 'learner' when the train
 * graph computes it (one optimizer step with TIS), or null when nothing can be stale (lockstep).
 */
export async function trainBatch(learner: Learner, algo: AlgoConfig, sc: ScoredBatch, version: number, proximal: PositionScorer | 'learner' | null, rng: Rng): Promise<TrainedBatch> {
  const { batch } = sc;
  const t0 = performance.now();
  const off = await offPolicyWeights(algo, version, batch, sc.adv.adv, proximal);
  const corr = await rolloutCorrection(algo, batch, off, proximal);
  const offS = (performance.now() - t0) / 1000;
  const targets = { oldLogp: corr?.oldLogp ?? off.oldLogp, advantages: corr?.advUsed ?? off.advUsed, weights: corr?.weights ?? sc.weights, refLogp: sc.refLogp, extra: { ...valueTargets(batch, sc.adv.returns, algo.valueClip), ...off.extra } };
  const upd = await runUpdate(learner, algo, batch, targets, rng, { logprobs: batch.mu, mask: off.fresh });
  const lens = lensSample(batch, targets.oldLogp, targets.advantages, upd.stepLogprobs, targets.weights);
  return { off, upd, tis: isRatios(batch, off, upd.stepLogprobs, algo.tis.cap), offS, lens, ...(corr ? { correction: corr.metrics } : {}) };
}
