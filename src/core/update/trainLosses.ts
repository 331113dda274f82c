/**
 * The train-step graph's losses (update/trainStep.ts): the policy-gradient surrogates with their
 * clip and KL metrics, the reference KL, the value loss, imitation's cross-entropy and the
 * distillation KL, each a Σ over positions weighted by the aggregation weights.
 */
import type { Graph, Tensor } from '../graph/builder.ts';
import { indicator, maskedMean } from '../graph/nn.ts';
import type { DType } from '../graph/proto.ts';
import { reverseKl, TEACHER_LOGPROBS, type DistillLoss } from './distillLoss.ts';
import { covarianceTokens, gmpoTokens, sapoTokens } from './surrogates.ts';
import { HYPER_INPUTS, type HyperInput, type ImitationLoss, type PolicyGradientLoss } from './trainStepSpec.ts';
/**
 * GSPO's sequence log-ratio, broadcast back to every position of the sequence and detached:
 * mean over the sequence's policy tokens (mask 1) of log π − log π_old. [B, T] leads: a row is a
 * sequence. [N] leads: rows with equal `seq_ids` form one (a one-hot [N, N] sums them; N is a
 * minibatch, so this is small).
 */
function sequenceMeanLogRatio(g: Graph, logRatio: Tensor, mask: Tensor, lead: readonly number[], inp: (name: string, dtype?: DType) => Tensor): Tensor {
  const lr = g.stopGradient(g.mul(logRatio, mask));
  if (lead.length === 2) return g.div(g.reduceSum(lr, [1], true), g.maximum(g.reduceSum(mask, [1], true), 1));
  if (lead.length !== 1) throw new RangeError(`gspo: a lead of rank ${lead.length} has no sequence axis`);
  const N = lead[0];
  const oh = g.oneHot(inp('seq_ids', 'int32'), N); // [N rows, N sequences]
  const sums = g.matmul(g.reshape(lr, [1, N]), oh); // [1, N]
  const counts = g.matmul(g.reshape(mask, [1, N]), oh);
  const means = g.div(sums, g.maximum(counts, 1));
  return g.reshape(g.matmul(oh, g.reshape(means, [N, 1])), [N]);
}

/** What the loss and optimizer builders share while one train-step graph is built. */
export interface StepBuild {
  g: Graph;
  lead: readonly number[];
  /** Declares a per-position batch input of shape [...lead, ...last] (default [...lead]). */
  inp: (name: string, dtype?: DType, last?: number[]) => Tensor;
  /** Declares a scalar hyperparameter input with its configured value. */
  hp: (name: HyperInput, value: number) => Tensor;
  /** Outputs a scalar under `name`, reported as metric `key`. */
  metric: (t: Tensor, name: string, key: string) => void;
}

/** Per-position quantities every loss reads, [...lead] each. */
export interface Positions {
  /** log π of the taken action (differentiated). */
  lp: Tensor;
  /** Entropy of the full distribution, nats. */
  ent: Tensor;
  mask: Tensor;
  /** Σ over positions weighted by the aggregation weights. */
  wsum: (x: Tensor) => Tensor;
  value?: Tensor;
}

/** The RL loss: clipped surrogate (or CISPO / GSPO) − entropy bonus [+ KL to the reference] [+ value loss]. */
export function policyGradientLoss(b: StepBuild, loss: PolicyGradientLoss, pos: Positions): Tensor {
  const { g } = b;
  let total = policySurrogate(b, loss, pos);
  if (loss.useReference) total = g.add(total, referenceKl(b, loss, pos));
  if (pos.value) total = g.add(total, valueLoss(b, loss, pos.value, pos.mask));
  return total;
}

/** The policy term and its clip and KL metrics; returns pg loss − entropy bonus. */
function policySurrogate(b: StepBuild, loss: PolicyGradientLoss, { lp, ent, mask, wsum }: Positions): Tensor {
  const { g, inp, hp, metric, lead } = b;
  let adv = inp('advantages');
  let old = inp('old_logprobs');
  if (loss.proximal !== 'fed') {
    // π_old = stop-gradient(π) where prox_mask = 1: ratio 1, gradient A·∇log π.
    const pm = inp('prox_mask');
    const lpConst = g.stopGradient(lp);
    const cap = hp(HYPER_INPUTS.tisCap, loss.tisCap);
    const w = g.minimum(g.exp(g.minimum(g.maximum(g.sub(lpConst, old), -20), 20)), cap);
    adv = g.mul(adv, g.add(g.mul(pm, g.sub(w, 1)), 1));
    old = g.add(old, g.mul(pm, g.sub(lpConst, old)));
  }
  const clipLow = hp(HYPER_INPUTS.clipLow, loss.clipLow);
  const clipHigh = hp(HYPER_INPUTS.clipHigh, loss.clipHigh);
  const entCoef = hp(HYPER_INPUTS.entropyCoef, loss.entropyCoef);
  // Clamp the log-ratio before exp: a stale or corrupted old log-prob must not overflow.
  const logRatio = g.minimum(g.maximum(g.sub(lp, old), -20), 20);
  const tokenRatio = g.exp(logRatio);
  // The ratio the surrogate clips: per token, or the sequence's (value s, gradient s·∇log π).
  const ratio = loss.objective === 'gspo' ? g.mul(g.exp(sequenceMeanLogRatio(g, logRatio, mask, lead, inp)), g.exp(g.sub(lp, g.stopGradient(lp)))) : tokenRatio;
  // GMPO clips the log-ratio at −ε_low, ε_high: its ratio bounds are e^−ε_low, e^ε_high.
  const lo = loss.objective === 'gmpo' ? g.exp(g.neg(clipLow)) : g.sub(1, clipLow);
  const hi = loss.objective === 'gmpo' ? g.exp(clipHigh) : g.add(clipHigh, 1);
  const clipped = g.minimum(g.maximum(ratio, lo), hi);
  const ctx = { b, logRatio, adv, clipLow, clipHigh };
  const pgBase =
    loss.objective === 'cispo' ? g.neg(g.mul(g.mul(g.stopGradient(clipped), adv), lp))
    : loss.objective === 'sapo' ? sapoTokens(ctx, loss, tokenRatio)
    : loss.objective === 'gmpo' ? gmpoTokens(ctx, (x) => sequenceMeanLogRatio(g, x, mask, lead, inp))
    : g.neg(g.minimum(g.mul(ratio, adv), g.mul(clipped, adv)));
  const pgTok = loss.covariance === 'off' ? pgBase : covarianceTokens(ctx, loss, pgBase);
  const pgLoss = wsum(pgTok);
  metric(pgLoss, 'pg_loss', 'actor/pg_loss');
  const withBonus = g.sub(pgLoss, g.mul(wsum(ent), entCoef));
  // Metrics (no gradient flows from outputs that are not part of `total`).
  const negAdv = indicator(g, g.less(adv, 0));
  const posAdv = indicator(g, g.greater(adv, 0));
  // Clipped share: where the clip cuts the gradient (PPO: the ratio left the region in A's
  // direction), or where it bounds the weight (CISPO: any ratio outside the region).
  const lowCut = indicator(g, g.less(ratio, lo));
  const highCut = indicator(g, g.greater(ratio, hi));
  metric(maskedMean(g, loss.objective === 'cispo' ? lowCut : g.mul(lowCut, negAdv), mask), 'clipfrac_low', 'actor/clipfrac_low');
  metric(maskedMean(g, loss.objective === 'cispo' ? highCut : g.mul(highCut, posAdv), mask), 'clipfrac_high', 'actor/clipfrac_high');
  // k3 with samples from the behaviour policy: r = π_new/π_old, KL(old‖new) ≈ r − 1 − log r.
  metric(maskedMean(g, g.sub(g.sub(tokenRatio, 1), logRatio), mask), 'approx_kl', 'actor/approx_kl');
  return withBonus;
}

/** klCoef · Σ w · KL(π‖π_ref) per position (k1 or k3), and the k3 `actor/kl_ref` metric. */
function referenceKl(b: StepBuild, loss: PolicyGradientLoss, { lp, mask, wsum }: Positions): Tensor {
  const { g, inp, hp, metric } = b;
  const ref = inp('ref_logprobs');
  const klCoef = hp(HYPER_INPUTS.klCoef, loss.klCoef);
  const d = g.minimum(g.maximum(g.sub(ref, lp), -20), 20); // log(π_ref/π)
  const k3 = g.sub(g.sub(g.exp(d), 1), d);
  const klTok = loss.klEstimator === 'k3' ? k3 : g.neg(d);
  const term = g.mul(wsum(klTok), klCoef);
  metric(maskedMean(g, k3, mask), 'kl_ref', 'actor/kl_ref');
  return term;
}

/** valueCoef · ½ · mean (V − R)², clipped around the rollout's values when valueClip is set. */
function valueLoss(b: StepBuild, loss: PolicyGradientLoss, value: Tensor, mask: Tensor): Tensor {
  const { g, inp, hp, metric } = b;
  const returns = inp('returns');
  const vCoef = hp(HYPER_INPUTS.valueCoef, loss.valueCoef);
  const err = g.sub(value, returns);
  let sq = g.mul(err, err);
  if (loss.valueClip !== null) {
    const oldV = inp('old_values');
    const c = hp(HYPER_INPUTS.valueClip, loss.valueClip);
    const errClipped = g.sub(g.add(oldV, g.minimum(g.maximum(g.sub(value, oldV), g.neg(c)), c)), returns);
    sq = g.maximum(sq, g.mul(errClipped, errClipped));
  }
  const vLoss = g.mul(maskedMean(g, sq, mask), 0.5);
  metric(vLoss, 'value_loss', 'critic/value_loss');
  return g.mul(vLoss, vCoef);
}

/** Supervised cross-entropy on the given actions − entropy bonus (the imitation warm start). */
export function imitationLoss(b: StepBuild, loss: ImitationLoss, { lp, ent, mask, wsum }: Positions): Tensor {
  const { g, hp, metric } = b;
  const entCoef = hp(HYPER_INPUTS.entropyCoef, loss.entropyCoef);
  const ce = g.neg(wsum(lp));
  metric(ce, 'ce_loss', 'imitation/ce_loss');
  const total = g.sub(ce, g.mul(wsum(ent), entCoef));
  metric(maskedMean(g, g.exp(lp), mask), 'target_prob', 'imitation/target_prob_mean');
  return total;
}

/** klCoef · Σ w · KL(π‖π_teacher) over the full vocabulary (update/distillLoss.ts), and its per-token mean. */
export function distillLoss(b: StepBuild, loss: DistillLoss, logp: Tensor, { mask, wsum }: Positions): Tensor {
  const { g, inp, hp, metric } = b;
  const teacher = inp(TEACHER_LOGPROBS, 'float32', [logp.shape[logp.shape.length - 1]]);
  const kl = reverseKl(g, logp, teacher);
  metric(maskedMean(g, kl, mask), 'distill_kl', 'distill/kl');
  return g.mul(wsum(kl), hp(HYPER_INPUTS.klCoef, loss.klCoef));
}
