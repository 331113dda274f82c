/**
 * Episode-level advantage estimators and the loss's aggregation weights, over plain arrays.
 *
 * Sequence-level (REINFORCE, GRPO, Dr.GRPO, RLOO): one scalar reward per episode in, one scalar
 * advantage per episode out; the advantage phase (batchAdvantages.ts) puts it on every trained
 * position of the episode. Step-level GAE for PPO is gae.ts.
 *
 * Group layout: sequence-level rewards are flat and group-major. A batch of G groups of size N
 * is `[g0e0, g0e1, …, g0e(N−1), g1e0, …]` (length G·N); group g is indices [g·N, (g+1)·N).
 * All episodes of one group started from the same seed (same start state).
 *
 * The loss the train step computes is `Σ_tokens weight_t · ℓ_t(advantage_t, …)`: advantages
 * (what to push) and aggregation weights (how much each token counts) are separate arrays.
 */
import { mean, std, type Numbers } from './stats.ts';

/**
 * How the per-token losses are summed into one number (the loss is Σ_t weight_t · ℓ_t):
 * - 'token' (DAPO): every policy token in the batch counts the same, weight 1/N_tokens.
 *   Long sequences contribute more tokens, hence more gradient.
 * - 'sequence' (original GRPO): mean over each sequence's tokens, then mean over sequences:
 *   weight 1/(len_b · n_seqs), where n_seqs counts sequences with ≥ 1 policy token. A token of
 *   a long sequence counts less (length bias: long wrong answers are penalised less per token).
 * - 'constant' (Dr.GRPO): weight 1/(n_seqs · L) for a constant L (the generation budget, or T):
 *   no dependence on any sequence's length, so no length bias; the scale is fixed across batches.
 *   Here n_seqs = B (all sequences, fixed batch size).
 */
export type Aggregation = 'token' | 'sequence' | 'constant';

// ---------------------------------------------------------------------------------------------
// Sequence-level estimators
// ---------------------------------------------------------------------------------------------

/** State of an exponential-moving-average baseline, carried from one iteration to the next. */
export interface EmaBaselineState {
  /** Current baseline value b, in reward units; meaningless until `initialized`. */
  value: number;
  /** False until the first batch has been seen. */
  initialized: boolean;
}

export const EMA_BASELINE_INIT: EmaBaselineState = { value: 0, initialized: false };

export type ReinforceBaseline =
  /** b = mean reward of the current batch (slightly biased: b depends on r_i; negligible for large batches). */
  | { kind: 'batch' }
  /**
   * b = EMA of past batch means, `b ← decay·b + (1−decay)·mean(r)`. The advantage uses b
   * *before* this batch's update, so b is independent of the batch (unbiased). The very first
   * batch initialises b to its own mean (otherwise early advantages would be the raw rewards).
   */
  | { kind: 'ema'; decay: number; state: EmaBaselineState };

/**
 * REINFORCE with a baseline: A_i = r_i − b.
 * @param rewards [n] episode rewards.
 * @returns advantages [n], the baseline b used, and the next EMA state (unchanged for 'batch').
 */
export function reinforceAdvantages(
  rewards: Numbers,
  baseline: ReinforceBaseline,
): { advantages: Float64Array; baseline: number; state: EmaBaselineState | null } {
  if (rewards.length === 0) throw new RangeError('reinforceAdvantages: empty batch');
  const m = mean(rewards);
  let b: number;
  let state: EmaBaselineState | null = null;
  if (baseline.kind === 'batch') {
    b = m;
  } else {
    const { decay } = baseline;
    if (!(decay >= 0 && decay < 1)) throw new RangeError(`reinforceAdvantages: EMA decay must be in [0, 1), got ${decay}`);
    b = baseline.state.initialized ? baseline.state.value : m;
    state = { value: decay * b + (1 - decay) * m, initialized: true };
  }
  const advantages = new Float64Array(rewards.length);
  for (let i = 0; i < rewards.length; i++) advantages[i] = rewards[i] - b;
  return { advantages, baseline: b, state };
}

function checkGroups(rewards: Numbers, groupSize: number, who: string): number {
  if (!Number.isInteger(groupSize) || groupSize < 1) throw new RangeError(`${who}: groupSize must be a positive integer, got ${groupSize}`);
  if (rewards.length % groupSize !== 0) {
    throw new RangeError(`${who}: ${rewards.length} rewards do not split into groups of ${groupSize}`);
  }
  return rewards.length / groupSize;
}

export interface GrpoOptions {
  /** Divide by the group's sample std (N−1, as TRL/veRL). False = Dr.GRPO's numerator only. */
  normalizeStd: boolean;
  /** Added to the std before dividing, so an all-equal group gives 0, not 0/0. */
  eps: number;
}

function allEqual(xs: readonly number[]): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] !== xs[0]) return false;
  return true;
}

/**
 * GRPO group-relative advantages: A_i = (r_i − mean_g) [/ (std_g + eps)], where mean_g and
 * std_g are over the episode's own group (std: sample, N−1). A group whose rewards are all
 * equal gets advantage exactly 0 for every episode (no signal; see dynamic sampling).
 * @param rewards [G·N] group-major.
 */

export function grpoAdvantages(rewards: Numbers, groupSize: number, opts: GrpoOptions): Float64Array {
  const nGroups = checkGroups(rewards, groupSize, 'grpoAdvantages');
  const out = new Float64Array(rewards.length);
  for (let g = 0; g < nGroups; g++) {
    const group = Array.prototype.slice.call(rewards, g * groupSize, (g + 1) * groupSize) as number[];
    // Equal rewards carry no signal: exactly 0, not the mean's rounding error over std + eps (it showed as +1e-10).
    if (allEqual(group)) continue;
    const m = mean(group);
    const scale = opts.normalizeStd ? 1 / (std(group) + opts.eps) : 1;
    for (let j = 0; j < groupSize; j++) out[g * groupSize + j] = (group[j] - m) * scale;
  }
  return out;
}

/**
 * Dr.GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training"): A_i = r_i − mean_g, with
 * *no* std normalisation (dividing by std up-weights groups that are nearly all right or all
 * wrong) and *no* length normalisation: the loss must be aggregated with the constant
 * normaliser 1/(n_seqs · L) (`sequenceAggregationWeights(…, 'constant')`), not 1/len_i, which would
 * favour short correct answers and long wrong ones.
 */
export function drGrpoAdvantages(rewards: Numbers, groupSize: number): Float64Array {
  return grpoAdvantages(rewards, groupSize, { normalizeStd: false, eps: 0 });
}

/**
 * RLOO (Ahmadian et al. 2024): A_i = r_i − mean_{j≠i, j in group} r_j
 * = N/(N−1) · (r_i − mean_g). Unbiased: the baseline does not depend on r_i.
 * Group size 1 has no "others" to form a baseline: that is an error (config validation
 * rejects it earlier with a message), not a silent zero.
 */
export function rlooAdvantages(rewards: Numbers, groupSize: number): Float64Array {
  const nGroups = checkGroups(rewards, groupSize, 'rlooAdvantages');
  if (groupSize < 2) throw new RangeError('rlooAdvantages: group size 1 has no other samples to form a leave-one-out baseline; use groupSize ≥ 2');
  const out = new Float64Array(rewards.length);
  for (let g = 0; g < nGroups; g++) {
    if (allEqual(Array.prototype.slice.call(rewards, g * groupSize, (g + 1) * groupSize) as number[])) continue;
    let s = 0;
    for (let j = 0; j < groupSize; j++) s += rewards[g * groupSize + j];
    for (let j = 0; j < groupSize; j++) {
      const r = rewards[g * groupSize + j];
      out[g * groupSize + j] = r - (s - r) / (groupSize - 1);
    }
  }
  return out;
}

/**
 * Batch advantage normalisation (CleanRL `norm_adv`): (A − mean) / (std + eps) over the
 * positions where mask ≠ 0 (all positions without a mask); masked-out positions stay 0.
 */
export function normalizeAdvantages(adv: Numbers, mask?: Numbers, eps = 1e-8): Float64Array {
  const sel: number[] = [];
  for (let i = 0; i < adv.length; i++) if (!mask || mask[i] !== 0) sel.push(adv[i]);
  const m = mean(sel);
  const s = std(sel);
  const out = new Float64Array(adv.length);
  for (let i = 0; i < adv.length; i++) if (!mask || mask[i] !== 0) out[i] = (adv[i] - m) / (s + eps);
  return out;
}

/**
 * The aggregation weight of each sequence's policy tokens, [B] (0 for a sequence without any),
 * from its policy-token count: 1/N_tokens ('token'), 1/(len_b · n_seqs) over non-empty
 * sequences ('sequence'), 1/(B · L) ('constant'). All zero when no sequence has a policy token.
 * Layout-free: `aggregationWeightsOf` (batchAdvantages.ts) spreads it over a rollout batch's
 * trained positions.
 * @param counts [B] policy tokens (steps) per sequence.
 * @param constantLen L for 'constant'.
 */
export function sequenceAggregationWeights(counts: Numbers, mode: Aggregation, constantLen: number): Float64Array {
  const B = counts.length;
  const out = new Float64Array(B);
  let total = 0;
  let nonEmpty = 0;
  for (let b = 0; b < B; b++) {
    total += counts[b];
    if (counts[b] > 0) nonEmpty++;
  }
  if (total === 0) return out;
  const L = constantLen;
  if (mode === 'constant' && !(L > 0)) throw new RangeError(`sequenceAggregationWeights: constant length must be > 0, got ${L}`);
  for (let b = 0; b < B; b++) {
    if (counts[b] === 0) continue;
    out[b] = mode === 'token' ? 1 / total : mode === 'sequence' ? 1 / (counts[b] * nonEmpty) : 1 / (B * L);
  }
  return out;
}
