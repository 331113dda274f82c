/**
 * Float64 reference values of the policy and value losses and their metrics (metric names: metrics/registry.ts).
 *
 * The ONNX train-step graph computes these same quantities (and their gradients) in float32;
 * its outputs are tested against these functions. So the definitions here are the contract:
 *
 * Shapes: every per-token array is flat, length N (in practice a rollout batch's positions, see
 * update/batch.ts), and all arrays of one call have the same N.
 * - `mask[i]`      1 = policy token, 0 = environment token or padding. Metrics named "share of
 *                  tokens" or "mean over tokens" are plain means over mask ≠ 0 (unweighted).
 * - `weights[i]`   aggregation weight (`aggregationWeightsOf`), 0 where mask is 0. Every loss
 *                  *value* is Σ_i weights[i] · ℓ_i, so the aggregation mode lives only here.
 * - log-probs are natural logs of the probability of the sampled token.
 *
 * Sign convention: losses are minimised. The policy-gradient term is −advantage·ratio, the
 * entropy bonus enters with a minus sign, KL and value terms with a plus sign.
 */
import type { AlgoConfig, KlEstimator } from './config.ts';
import type { Numbers } from './stats.ts';


/**
 * k1 = log π(a) − log π_ref(a). Unbiased for KL(π‖π_ref) with a ~ π, but high-variance and
 * often negative per token. As a *loss* its expected gradient is zero-ish (∇ of an expectation
 * whose sampling distribution is ignored), so use k1 as a reward penalty, k3 as a loss.
 */
export function klK1(logp: number, refLogp: number): number {
  return logp - refLogp;
}

/**
 * k3 = ρ − 1 − log ρ with ρ = π_ref(a)/π(a). Unbiased for KL(π‖π_ref), always ≥ 0, low variance.
 */
export function klK3(logp: number, refLogp: number): number {
  const logRho = refLogp - logp;
  return Math.exp(logRho) - 1 - logRho;
}

/** Per-token KL estimate [N] (0 where mask is 0). */
export function klPerToken(logp: Numbers, refLogp: Numbers, mask: Numbers, estimator: KlEstimator): Float64Array {
  checkLen(logp.length, { refLogp, mask }, 'klPerToken');
  const f = estimator === 'k1' ? klK1 : klK3;
  const out = new Float64Array(logp.length);
  for (let i = 0; i < logp.length; i++) if (mask[i] !== 0) out[i] = f(logp[i], refLogp[i]);
  return out;
}

/**
 * KL as a reward penalty (klMode 'reward'): r'_b = r_b − β · Σ_{t in seq b, policy} KL_t.
 * Sequence KL is the *sum* over its tokens (the chain rule for a sequence's KL); `logp` is the
 * behaviour policy's log-prob of each sampled token (the one that generated it). Use the
 * penalised rewards as input to the advantage estimator; the penalty carries no gradient.
 * @param rewards [B]; logp, refLogp, mask: [B·T].
 * @returns penalised rewards [B] and the per-sequence KL [B] (for a metric).
 */
export function klPenalizedRewards(
  rewards: Numbers,
  seqLen: number,
  logp: Numbers,
  refLogp: Numbers,
  mask: Numbers,
  coef: number,
  estimator: KlEstimator,
): { rewards: Float64Array; seqKl: Float64Array } {
  const B = rewards.length;
  if (logp.length !== B * seqLen) throw new RangeError(`klPenalizedRewards: ${logp.length} log-probs, expected ${B}·${seqLen}`);
  const k = klPerToken(logp, refLogp, mask, estimator);
  const seqKl = new Float64Array(B);
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let t = 0; t < seqLen; t++) s += k[b * seqLen + t];
    seqKl[b] = s;
    out[b] = rewards[b] - coef * s;
  }
  return { rewards: out, seqKl };
}

/**
 * KL as a per-step reward penalty on one episode's shaped reward (klMode 'reward' for a step
 * policy, whose advantages may be per step, e.g. GAE): each step t loses β·KL_t, and the
 * episode total loses the same amounts, one step at a time. Mutates `reward`.
 * @param logp [T] behaviour log-probs of the actions taken; refLogp [T] the reference's.
 */
export function klPenalizeSteps(reward: { perStep: Float64Array; total: number }, logp: Numbers, refLogp: Numbers, coef: number, estimator: KlEstimator): void {
  checkLen(reward.perStep.length, { logp, refLogp }, 'klPenalizeSteps');
  const f = estimator === 'k1' ? klK1 : klK3;
  for (let t = 0; t < logp.length; t++) {
    const kl = f(logp[t], refLogp[t]);
    reward.perStep[t] -= coef * kl;
    reward.total -= coef * kl;
  }
}

/** Per-step variant for PPO: r'_t = r_t − β·KL_t, elementwise over equal-length arrays. */
export function subtractKl(rewards: Numbers, kl: Numbers, coef: number): Float64Array {
  checkLen(rewards.length, { kl }, 'subtractKl');
  const out = new Float64Array(rewards.length);
  for (let i = 0; i < rewards.length; i++) out[i] = rewards[i] - coef * kl[i];
  return out;
}

/** Hyperparameters of the actor loss (a subset of `AlgoConfig`). */
/** The loss knobs of an algorithm config (documented on AlgoConfig); with klMode 'reward' the KL was already subtracted from rewards and there is no loss term here. */
export type PolicyLossConfig = Pick<AlgoConfig, 'clipLow' | 'clipHigh' | 'klCoef' | 'klEstimator' | 'klMode' | 'entropyCoef'>;

/** Per-token inputs of the actor loss; all [N]. */
export interface PolicyLossInputs {
  /** log π_θ(a_i): the parameters being updated (differentiated in the graph). */
  logp: Numbers;
  /**
   * log π_old(a_i): the fixed policy the ratio is taken against — the trainer's parameters at
   * the start of this batch's updates (PPO's θ_old). Equals the behaviour log-prob when
   * rollouts are synchronous; with stale rollouts the behaviour mismatch is corrected by
   * `isWeights` instead (see update/importanceWeights.ts).
   */
  oldLogp: Numbers;
  /** Advantage per token (0 on non-policy tokens). */
  advantages: Numbers;
  /** Aggregation weights (sum to 1 for 'token' and 'sequence' aggregation). */
  weights: Numbers;
  /** 1 = policy token. */
  mask: Numbers;
  /** Truncated importance weights (constants, no gradient); absent = all 1. */
  isWeights?: Numbers;
  /** log π_ref(a_i), required when klCoef > 0 with klMode 'loss', and for `actor/kl_ref`. */
  refLogp?: Numbers;
  /** Entropy of the full next-token distribution at each position, in nats (≥ 0). */
  entropy?: Numbers;
}

export interface PolicyLossResult {
  /** Σ w_i · is_i · −min(ρ_i·A_i, clip(ρ_i, 1−ε_low, 1+ε_high)·A_i), ρ_i = exp(logp − oldLogp). */
  pgLoss: number;
  /** Σ w_i · KL_i with the configured estimator; 0 without refLogp. */
  klLoss: number;
  /** Σ w_i · H_i (the bonus, before its coefficient); 0 without entropy. */
  entropyBonus: number;
  /** pgLoss + (klMode 'loss' ? klCoef·klLoss : 0) − entropyCoef·entropyBonus. */
  loss: number;
  /** `actor/clipfrac_low`: share of policy tokens with A < 0 and ρ < 1 − ε_low (gradient cut). */
  clipfracLow: number;
  /** `actor/clipfrac_high`: share of policy tokens with A > 0 and ρ > 1 + ε_high (gradient cut). */
  clipfracHigh: number;
  /** `actor/approx_kl`: mean over policy tokens of k3 between old and new, (ρ − 1) − log ρ. */
  approxKl: number;
  /** `actor/kl_ref`: mean over policy tokens of k3 to the reference (always k3); NaN without refLogp. */
  klRef: number;
  /** `actor/entropy`: mean over policy tokens of H_i (unweighted); NaN without entropy. */
  entropy: number;
}

function checkLen(n: number, arrays: Record<string, Numbers | undefined>, who: string): void {
  for (const [name, a] of Object.entries(arrays)) {
    if (a !== undefined && a.length !== n) throw new RangeError(`${who}: ${name} has ${a.length} entries, expected ${n}`);
  }
}

/** The actor loss and its metrics, float64. Shapes and semantics: see the interfaces above. */
export function policyLoss(inp: PolicyLossInputs, cfg: PolicyLossConfig): PolicyLossResult {
  const n = inp.logp.length;
  checkLen(n, { oldLogp: inp.oldLogp, advantages: inp.advantages, weights: inp.weights, mask: inp.mask, isWeights: inp.isWeights, refLogp: inp.refLogp, entropy: inp.entropy }, 'policyLoss');
  if (cfg.klMode === 'loss' && cfg.klCoef !== 0 && !inp.refLogp) throw new RangeError('policyLoss: klCoef > 0 with klMode "loss" needs refLogp');
  const lo = 1 - cfg.clipLow;
  const hi = 1 + cfg.clipHigh;
  const klf = cfg.klEstimator === 'k1' ? klK1 : klK3;
  let pg = 0, kl = 0, ent = 0;
  let nTok = 0, nLow = 0, nHigh = 0, approx = 0, klRef = 0, entMean = 0;
  for (let i = 0; i < n; i++) {
    const w = inp.weights[i];
    const A = inp.advantages[i];
    const logRatio = inp.logp[i] - inp.oldLogp[i];
    const ratio = Math.exp(logRatio);
    const clipped = Math.min(Math.max(ratio, lo), hi);
    const is = inp.isWeights ? inp.isWeights[i] : 1;
    if (w !== 0) pg += w * is * -Math.min(ratio * A, clipped * A);
    if (inp.refLogp && w !== 0) kl += w * klf(inp.logp[i], inp.refLogp[i]);
    if (inp.entropy && w !== 0) ent += w * inp.entropy[i];
    if (inp.mask[i] === 0) continue;
    nTok++;
    if (A < 0 && ratio < lo) nLow++;
    if (A > 0 && ratio > hi) nHigh++;
    approx += ratio - 1 - logRatio;
    if (inp.refLogp) klRef += klK3(inp.logp[i], inp.refLogp[i]);
    if (inp.entropy) entMean += inp.entropy[i];
  }
  const klTerm = cfg.klMode === 'loss' ? cfg.klCoef * kl : 0;
  return {
    pgLoss: pg,
    klLoss: kl,
    entropyBonus: ent,
    loss: pg + klTerm - cfg.entropyCoef * ent,
    clipfracLow: nTok ? nLow / nTok : 0,
    clipfracHigh: nTok ? nHigh / nTok : 0,
    approxKl: nTok ? approx / nTok : 0,
    klRef: inp.refLogp && nTok ? klRef / nTok : NaN,
    entropy: inp.entropy && nTok ? entMean / nTok : NaN,
  };
}

/** Per-step/per-token inputs of the critic loss; all [N]. */
export interface ValueLossInputs {
  /** V_θ(s_i): current critic output (differentiated in the graph). */
  values: Numbers;
  /** V_old(s_i): critic output at rollout time (for clipping). */
  oldValues: Numbers;
  /** Value targets (GAE returns). */
  returns: Numbers;
  /** Aggregation weights (0 off-policy positions). */
  weights: Numbers;
}

/**
 * `critic/value_loss` = Σ w_i · ½·max((V_i − R_i)², (V_clip,i − R_i)²) with
 * V_clip,i = V_old,i + clip(V_i − V_old,i, −c, c) (PPO2 / CleanRL `clip_vloss`), or
 * Σ w_i · ½·(V_i − R_i)² when `valueClip` is null.
 */
export function valueLoss(inp: ValueLossInputs, valueClip: number | null): number {
  const n = inp.values.length;
  checkLen(n, { oldValues: inp.oldValues, returns: inp.returns, weights: inp.weights }, 'valueLoss');
  let s = 0;
  for (let i = 0; i < n; i++) {
    const w = inp.weights[i];
    if (w === 0) continue;
    const e = inp.values[i] - inp.returns[i];
    let sq = e * e;
    if (valueClip !== null) {
      const d = Math.min(Math.max(inp.values[i] - inp.oldValues[i], -valueClip), valueClip);
      const ec = inp.oldValues[i] + d - inp.returns[i];
      sq = Math.max(sq, ec * ec);
    }
    s += w * 0.5 * sq;
  }
  return s;
}

/** PPO's total: actor loss + valueCoef · value loss. */
export function totalLoss(actor: PolicyLossResult, value: number, valueCoef: number): number {
  return actor.loss + valueCoef * value;
}

/**
 * ∂loss/∂logp_i of `policyLoss(…).loss` with respect to each token's log π_θ, holding oldLogp,
 * advantages, weights, isWeights and refLogp constant (excludes the entropy term, whose
 * gradient flows through the whole distribution, not the sampled log-prob). A float64
 * reference for the train-step graph's backward pass:
 *   pg:  −w·is·A·ρ where the unclipped branch is the min (ρ inside the bounds, or on the side
 *        where clipping does not bind); 0 where the clipped branch binds
 *   k1:  w·β                      k3: w·β·(1 − π_ref/π)
 */
export function policyLossGradLogp(inp: PolicyLossInputs, cfg: PolicyLossConfig): Float64Array {
  const n = inp.logp.length;
  checkLen(n, { oldLogp: inp.oldLogp, advantages: inp.advantages, weights: inp.weights, isWeights: inp.isWeights, refLogp: inp.refLogp }, 'policyLossGradLogp');
  const lo = 1 - cfg.clipLow;
  const hi = 1 + cfg.clipHigh;
  const beta = cfg.klMode === 'loss' && inp.refLogp ? cfg.klCoef : 0;
  const g = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const w = inp.weights[i];
    if (w === 0) continue;
    const A = inp.advantages[i];
    const ratio = Math.exp(inp.logp[i] - inp.oldLogp[i]);
    const clipped = Math.min(Math.max(ratio, lo), hi);
    const is = inp.isWeights ? inp.isWeights[i] : 1;
    let d = ratio * A <= clipped * A ? -is * A * ratio : 0;
    if (beta !== 0) d += beta * (cfg.klEstimator === 'k1' ? 1 : 1 - Math.exp(inp.refLogp![i] - inp.logp[i]));
    g[i] = w * d;
  }
  return g;
}
