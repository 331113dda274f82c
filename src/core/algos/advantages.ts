/**
 * Advantage estimators and their broadcast onto tokens.
 *
 * Two granularities:
 * - Sequence-level (REINFORCE, GRPO, Dr.GRPO, RLOO): one scalar reward per episode in, one
 *   scalar advantage per episode out, then `broadcastToTokens` gives every policy token of the
 *   episode that advantage.
 * - Step-level (PPO): GAE(γ, λ) over an episode's steps, with a learned value per step.
 *
 * Group layout: sequence-level rewards are flat and group-major. A batch of G groups of size N
 * is `[g0e0, g0e1, …, g0e(N−1), g1e0, …]` (length G·N); group g is indices [g·N, (g+1)·N).
 * All episodes of one group started from the same seed (same start state).
 *
 * Token layout: per-token arrays are flat row-major `[B, T]` (index `b·T + t`), the layout the
 * ONNX train step consumes. `lossMask[b·T + t]` is 1 for a policy token, 0 for an environment
 * token or padding; every per-token output here is 0 where the mask is 0.
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
 * normaliser 1/(n_seqs · L) (`aggregationWeights(…, 'constant')`), not 1/len_i, which would
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

// ---------------------------------------------------------------------------------------------
// GAE for PPO
// ---------------------------------------------------------------------------------------------

/** One episode (or rollout fragment) of T steps for GAE. */
export interface GaeEpisode {
  /** [T] reward received after step t's action. */
  rewards: Numbers;
  /** [T] V(s_t), the critic's value of the state in which step t's action was taken. */
  values: Numbers;
  /**
   * True end of the episode after the last step (goal, death, final answer): V(s_T) := 0,
   * no bootstrap. Takes precedence over `truncated` if both are set.
   */
  terminated: boolean;
  /**
   * Time limit hit, or a fragment cut mid-episode: the episode did not end in the MDP, so the
   * last step bootstraps from `bootstrapValue` = V(s_T). (If neither flag is set the fragment
   * is treated the same way.)
   */
  truncated: boolean;
  /** V(s_T) of the observation after the last step; required unless `terminated`. */
  bootstrapValue?: number;
}

/**
 * Generalised Advantage Estimation (Schulman et al. 2016).
 *   δ_t = r_t + γ·V(s_{t+1}) − V(s_t),   with V(s_T) = 0 if terminated else bootstrapValue
 *   A_t = δ_t + γλ·A_{t+1},              A_T = 0
 *   returns_t = A_t + V(s_t)            (the value target, TD(λ) return)
 * λ = 1 gives Monte Carlo returns minus V; λ = 0 gives the one-step TD error.
 * @returns advantages [T], returns [T].
 */
export function gae(ep: GaeEpisode, gamma: number, lambda: number): { advantages: Float64Array; returns: Float64Array } {
  const T = ep.rewards.length;
  if (ep.values.length !== T) throw new RangeError(`gae: ${T} rewards vs ${ep.values.length} values`);
  if (!(gamma >= 0 && gamma <= 1)) throw new RangeError(`gae: gamma must be in [0, 1], got ${gamma}`);
  if (!(lambda >= 0 && lambda <= 1)) throw new RangeError(`gae: lambda must be in [0, 1], got ${lambda}`);
  let nextValue: number;
  if (ep.terminated) nextValue = 0;
  else {
    if (ep.bootstrapValue === undefined || !Number.isFinite(ep.bootstrapValue)) {
      throw new RangeError('gae: a truncated (or unfinished) episode needs a finite bootstrapValue V(s_T)');
    }
    nextValue = ep.bootstrapValue;
  }
  const advantages = new Float64Array(T);
  const returns = new Float64Array(T);
  let next = 0;
  for (let t = T - 1; t >= 0; t--) {
    const delta = ep.rewards[t] + gamma * nextValue - ep.values[t];
    next = delta + gamma * lambda * next;
    advantages[t] = next;
    returns[t] = next + ep.values[t];
    nextValue = ep.values[t];
  }
  return { advantages, returns };
}

/** GAE over several episodes, results concatenated in episode order (lengths Σ T_e). */
export function gaeBatch(eps: readonly GaeEpisode[], gamma: number, lambda: number): { advantages: Float64Array; returns: Float64Array } {
  let n = 0;
  for (const e of eps) n += e.rewards.length;
  const advantages = new Float64Array(n);
  const returns = new Float64Array(n);
  let o = 0;
  for (const e of eps) {
    const r = gae(e, gamma, lambda);
    advantages.set(r.advantages, o);
    returns.set(r.returns, o);
    o += r.advantages.length;
  }
  return { advantages, returns };
}

// ---------------------------------------------------------------------------------------------
// Tokens: broadcast and aggregation weights
// ---------------------------------------------------------------------------------------------

/** The shape of a padded token batch, as the train step sees it. */
export interface TokenBatch {
  /** B, number of sequences (episodes). */
  nSeqs: number;
  /** T, padded length; per-token arrays are [B·T], row-major. */
  seqLen: number;
  /** [B·T], 1 = policy token (in the loss), 0 = environment token or padding. */
  lossMask: Numbers;
}

function checkBatch(batch: TokenBatch, who: string): void {
  if (batch.lossMask.length !== batch.nSeqs * batch.seqLen) {
    throw new RangeError(`${who}: lossMask has ${batch.lossMask.length} entries, expected nSeqs·seqLen = ${batch.nSeqs}·${batch.seqLen}`);
  }
}

/** Policy tokens per sequence, [B]. */
export function policyTokenCounts(batch: TokenBatch): Int32Array {
  checkBatch(batch, 'policyTokenCounts');
  const out = new Int32Array(batch.nSeqs);
  for (let b = 0; b < batch.nSeqs; b++) {
    let n = 0;
    for (let t = 0; t < batch.seqLen; t++) if (batch.lossMask[b * batch.seqLen + t] !== 0) n++;
    out[b] = n;
  }
  return out;
}

/**
 * Sequence-level values [B] → per-token [B·T]: each policy token of sequence b gets seqValues[b],
 * environment tokens and padding get 0.
 */
export function broadcastToTokens(seqValues: Numbers, batch: TokenBatch): Float64Array {
  checkBatch(batch, 'broadcastToTokens');
  if (seqValues.length !== batch.nSeqs) throw new RangeError(`broadcastToTokens: ${seqValues.length} values for ${batch.nSeqs} sequences`);
  const T = batch.seqLen;
  const out = new Float64Array(batch.nSeqs * T);
  for (let b = 0; b < batch.nSeqs; b++) {
    for (let t = 0; t < T; t++) if (batch.lossMask[b * T + t] !== 0) out[b * T + t] = seqValues[b];
  }
  return out;
}

/**
 * Step-level values → per-token, for PPO on multi-token actions (a tool call of several tokens
 * is one step): out[i] = stepValues[tokenStep[i]], or 0 where tokenStep[i] < 0 (not a policy token).
 * @param tokenStep [B·T] index into stepValues for each policy token, −1 elsewhere.
 */
export function expandPerStep(stepValues: Numbers, tokenStep: Numbers): Float64Array {
  const out = new Float64Array(tokenStep.length);
  for (let i = 0; i < tokenStep.length; i++) {
    const s = tokenStep[i];
    if (s < 0) continue;
    if (s >= stepValues.length) throw new RangeError(`expandPerStep: token ${i} refers to step ${s} of ${stepValues.length}`);
    out[i] = stepValues[s];
  }
  return out;
}


/**
 * The aggregation weight of each sequence's policy tokens, [B] (0 for a sequence without any),
 * from its policy-token count: 1/N_tokens ('token'), 1/(len_b · n_seqs) over non-empty
 * sequences ('sequence'), 1/(B · L) ('constant'). All zero when no sequence has a policy token.
 * Layout-free: `aggregationWeights` spreads it over a padded [B·T] batch, a step trainer over
 * its flat rows.
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
  if (mode === 'constant' && !(L > 0)) throw new RangeError(`aggregationWeights: constant length must be > 0, got ${L}`);
  for (let b = 0; b < B; b++) {
    if (counts[b] === 0) continue;
    out[b] = mode === 'token' ? 1 / total : mode === 'sequence' ? 1 / (counts[b] * nonEmpty) : 1 / (B * L);
  }
  return out;
}

/**
 * Aggregation weights [B·T] (0 on non-policy tokens). For 'token' and 'sequence' they sum to 1
 * (when any policy token exists); for 'constant' they sum to N_tokens/(B·L) ≤ 1.
 * @param constantLen L for 'constant'; defaults to batch.seqLen (T).
 */
export function aggregationWeights(batch: TokenBatch, mode: Aggregation, constantLen?: number): Float64Array {
  const T = batch.seqLen;
  const perSeq = sequenceAggregationWeights(policyTokenCounts(batch), mode, constantLen ?? T);
  const out = new Float64Array(batch.nSeqs * T);
  for (let b = 0; b < batch.nSeqs; b++) {
    const w = perSeq[b];
    if (w === 0) continue;
    for (let t = 0; t < T; t++) if (batch.lossMask[b * T + t] !== 0) out[b * T + t] = w;
  }
  return out;
}
