/**
 * DAPO's length controls (Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System
 * at Scale"), applied once per batch in the score phase (trainer/phases.ts):
 *
 * - Soft overlong punishment, a reward term by length L (policy positions: grid steps, or policy
 *   tokens over all turns): 0 for L ≤ L_max − L_c, (L_max − L_c − L)/L_c inside the buffer, −1
 *   beyond L_max; times `penalty`. Added to the episode's reward before advantages, at its last step.
 * - Overlong filtering (`maskTruncated`): episodes cut by a time limit or the context carry no
 *   loss; the aggregation weights are recomputed without them, so with 'token' aggregation the
 *   normaliser is Σ|o_i| over the kept episodes only.
 */
import { sequenceAggregationWeights } from '../algos/advantages.ts';
import type { AlgoConfig } from '../algos/config.ts';
import { broadcast, positionCounts, type RolloutBatch } from './batch.ts';
import { stepEnds } from './positionRewards.ts';

/** DAPO's R_length(L) ∈ [−1, 0] for a response of L positions, L_max and buffer L_c (positions). */
export function overlongPenalty(L: number, maxLen: number, buffer: number): number {
  const start = maxLen - buffer;
  if (L <= start) return 0;
  if (L <= maxLen) return (start - L) / buffer;
  return -1;
}

/**
 * Adds `penalty`·R_length to each sequence's reward (its score, and its last step's reward at that
 * step's end position), in place; the batch must be the score phase's copy (`withOwnRewards`).
 * Returns the per-episode term [n] (for a metric).
 */
export function applyOverlong(b: RolloutBatch, algo: Pick<AlgoConfig, 'overlong'>): Float64Array {
  const out = new Float64Array(b.n);
  if (!algo.overlong.enabled) return out;
  const maxLen = algo.overlong.maxLen ?? b.horizon;
  const counts = positionCounts(b);
  for (let s = 0; s < b.n; s++) {
    const r = algo.overlong.penalty * overlongPenalty(counts[s], maxLen, Math.min(algo.overlong.buffer, maxLen));
    out[s] = r;
    if (r === 0) continue;
    b.scores[s] += r;
    const last = b.stepCounts[s] > 0 ? stepEnds(b, s, b.stepCounts[s])[b.stepCounts[s] - 1] : -1;
    if (last >= 0) b.rewards[last] += r;
  }
  return out;
}

/**
 * Aggregation weights [size] with truncated episodes (terminated 0) left out when `maskTruncated`:
 * their positions weigh 0 and 'token'/'sequence' weights renormalise over the kept ones. When every
 * episode was truncated, nothing is trained (all weights 0).
 */
export function truncationMaskedWeights(b: RolloutBatch, weights: Float64Array, algo: Pick<AlgoConfig, 'maskTruncated' | 'aggregation' | 'aggregationLen'>): Float64Array {
  if (!algo.maskTruncated || b.n === 0) return weights;
  const counts = positionCounts(b);
  for (let s = 0; s < b.n; s++) if (!b.terminated[s]) counts[s] = 0;
  return broadcast(b, sequenceAggregationWeights(counts, algo.aggregation, algo.aggregationLen ?? b.horizon));
}
