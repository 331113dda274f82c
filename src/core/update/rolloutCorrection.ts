/**
 * The rollout-correction phase over a batch (after the off-policy weights, before the update):
 * score π_old, the learner's weights before the update, at every trained position, and turn
 * log ρ = log π_old − log μ into what the selected modes say (algos/correction/):
 * - decoupled mode: the update's π_old becomes the scored one (ratio π_θ/π_old), and an IS mode
 *   multiplies each advantage by its truncated weight;
 * - bypass mode: π_old stays μ (ratio π_θ/μ);
 * - either mode: rejection sampling and M2PO drop positions from the loss (aggregation weight 0,
 *   the normaliser taken over the kept positions).
 * The weight multiplies the advantage only, as TIS does (offPolicy.ts).
 */
import type { AlgoConfig } from '../algos/config.ts';
import { correctionActive, correctionBounds } from '../algos/correction/config.ts';
import { isMode, rsMode } from '../algos/correction/index.ts';
import { m2po } from '../algos/correction/m2po.ts';
import { correctionMetrics, type CorrectionMetrics } from '../algos/correction/metrics.ts';
import { tokenIs } from '../algos/correction/tokenIs.ts';
import type { CorrectionBatch } from '../algos/correction/types.ts';
import { aggregationWeightsOf } from './batchAdvantages.ts';
import type { RolloutBatch } from './batch.ts';
import type { OffPolicy, PositionScorer } from './offPolicy.ts';

export interface Corrected {
  /** [size] π_old for the update's ratio. */
  oldLogp: Float32Array;
  /** [size] advantages with the IS weights applied (0 on rejected positions). */
  advUsed: Float64Array;
  /** [size] aggregation weights over the kept positions. */
  weights: Float64Array;
  /** [size] IS weight actually applied (truncated; 1 where no IS mode runs, 0 off the mask). */
  isWeights: Float64Array;
  /** [size] 1 = kept in the loss. */
  keep: Float64Array;
  metrics: CorrectionMetrics;
}

/** Elementwise product of keep masks (null = keep all). */
function both(a: Float64Array | null, b: Float64Array | null, mask: Float32Array): Float64Array {
  const out = new Float64Array(mask.length);
  for (let i = 0; i < out.length; i++) out[i] = mask[i] && (a ? a[i] : 1) && (b ? b[i] : 1) ? 1 : 0;
  return out;
}

/**
 * The correction from π_old already scored (pure; the tests drive it directly).
 * @param oldLogp [size] the learner's log-probs before the update, on the trained positions.
 * @param off the off-policy phase's result (its oldLogp/advUsed are the starting point).
 */
export function correctBatch(algo: Pick<AlgoConfig, 'rolloutCorrection' | 'aggregation' | 'aggregationLen'>, b: RolloutBatch, off: Pick<OffPolicy, 'oldLogp' | 'advUsed'>, oldLogp: Float32Array): Corrected {
  const c = algo.rolloutCorrection;
  const bounds = correctionBounds(c);
  const logRatio = new Float64Array(b.size);
  for (let i = 0; i < b.size; i++) if (b.mask[i]) logRatio[i] = oldLogp[i] - b.mu[i];
  const cb: CorrectionBatch = { logRatio, mask: b.mask, starts: b.starts, lengths: b.lengths };
  const is = isMode(c.is);
  // Without an IS mode the diagnostics still describe the token-level ratios (veRL logs rollout_corr/* whenever it scores π_old).
  const shown = is ?? tokenIs;
  const ratios = shown.ratios(cb);
  const rs = rsMode(c.rs);
  const rsKeep = rs ? rs.keep(cb, bounds.rsLow, bounds.rsHigh) : null;
  const m2Keep = c.m2po !== null ? m2po.keep(cb, bounds) : null;
  const keep = both(rsKeep, m2Keep, b.mask);
  const isWeights = new Float64Array(b.size);
  const advUsed = Float64Array.from(off.advUsed);
  for (let i = 0; i < b.size; i++) {
    if (!b.mask[i]) continue;
    isWeights[i] = is ? Math.min(ratios[i], c.isCap) : 1;
    advUsed[i] = keep[i] ? advUsed[i] * isWeights[i] : 0;
  }
  const weights = aggregationWeightsOf({ ...b, mask: Float32Array.from(keep) }, algo);
  const metrics = correctionMetrics({ b: cb, ratios, perSequence: shown.perSequence, isCap: c.isCap, rsKeep, m2Keep });
  return { oldLogp: c.mode === 'decoupled' ? oldLogp.slice() : off.oldLogp, advUsed, weights, isWeights, keep, metrics };
}

/**
 * The phase: null when no correction is configured. `proximal` must be a scorer of the learner's
 * current weights (the grid MLP trainer's `RowScorer`).
 */
export async function rolloutCorrection(algo: AlgoConfig, b: RolloutBatch, off: OffPolicy, proximal: PositionScorer | 'learner' | null): Promise<Corrected | null> {
  if (!correctionActive(algo.rolloutCorrection) || b.n === 0) return null;
  if (!proximal || proximal === 'learner') {
    throw new Error('rolloutCorrection: this trainer keeps no scorer of the learner\'s weights (π_old); rollout correction runs on grid MLP runs');
  }
  return correctBatch(algo, b, off, await proximal.logprobsAt(b));
}
