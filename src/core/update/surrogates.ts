/**
 * Per-token policy-gradient losses beyond PPO's clip, CISPO and GSPO, built into the train-step
 * graph (update/trainStep.ts `policySurrogate`), each [...lead] and summed there with the
 * aggregation weights:
 *
 * - SAPO (Gao et al. 2025, arXiv 2511.20347): the hard clip becomes a soft gate,
 *   ℓ = −f(r)·A with f(r) = (4/τ)·σ(τ·(r − 1)), τ = τ_pos where A > 0 and τ_neg where A < 0.
 *   Its gradient is 4·σ(1 − σ)·r·A·∇log π: the plain policy gradient at r = 1, fading smoothly
 *   as r leaves 1 (faster for the larger τ) instead of dropping to 0 at a bound.
 * - GMPO (Zhao et al. 2025, arXiv 2507.20673; veRL `geo_mean`): each sequence's objective is A
 *   times the geometric mean of its token ratios, each clipped in log space in A's direction:
 *   −A·exp((1/|o|)·Σ_t sgn(A)·min(sgn(A)·log r_t, sgn(A)·clip(log r_t, −ε_low, ε_high))). As
 *   per-token terms: −A·sg(s)·exp(ℓ_t − sg(ℓ_t)) with s the sequence's geometric mean, which with
 *   'sequence' aggregation (weights 1/(G·|o|)) has the objective's value and gradient.
 * - Clip-Cov and KL-Cov (Cui et al. 2025, "The Entropy Mechanism of RL for Reasoning LMs";
 *   veRL `clip_cov`, `kl_cov`), on top of any of the objectives: `cov_mask` (1 = selected,
 *   update/covariance.ts picks the tokens) zeroes the selected tokens' loss (Clip-Cov) or adds
 *   coef·|log r| to it (KL-Cov).
 */
import type { Graph, Tensor } from '../graph/builder.ts';
import { indicator } from '../graph/nn.ts';

/** The policy-gradient objectives the train-step graph builds. */
export type PgObjective = 'clip' | 'cispo' | 'gspo' | 'sapo' | 'gmpo';

/** Covariance-based entropy control: off, Clip-Cov (stop the gradient) or KL-Cov (a KL penalty). */
export type CovarianceMode = 'off' | 'clip-cov' | 'kl-cov';

/** The graph's train input holding the covariance selection (1 = selected token). */
export const COV_MASK = 'cov_mask';

/**
 * The part of the train-step build these losses use (trainStep.ts's StepBuild satisfies it; it is
 * restated here because trainStep.ts imports this file).
 */
export interface SurrogateBuild {
  g: Graph;
  /** Declares a per-position batch input of shape [...lead]. */
  inp: (name: string) => Tensor;
  /** Declares a scalar hyperparameter input (its `hp.<name>`) with its configured value. */
  hp: (name: 'tau_pos' | 'tau_neg' | 'cov_kl_coef', value: number) => Tensor;
}

/** The loss options these builders read (PolicyGradientLoss's fields of the same names). */
export interface SurrogateOptions {
  tauPos: number;
  tauNeg: number;
  covariance: CovarianceMode;
  covKlCoef: number;
}

/** What the per-token losses read, [...lead] each (clip bounds are scalar graph inputs). */
export interface SurrogateContext {
  b: SurrogateBuild;
  /** log π_θ − log π_old of the taken token (differentiated), clamped to ±20. */
  logRatio: Tensor;
  adv: Tensor;
  clipLow: Tensor;
  clipHigh: Tensor;
}

/** σ(x) = ½·(1 + tanh(x/2)): no overflow for large |x|, and the graph has a Tanh kernel everywhere. */
function sigmoid(b: SurrogateBuild, x: Tensor): Tensor {
  const { g } = b;
  return g.mul(g.add(g.tanh(g.mul(x, 0.5)), 1), 0.5);
}

/** sign(x) ∈ {−1, 0, 1}, a constant for autodiff. */
function sign(b: SurrogateBuild, x: Tensor): Tensor {
  const { g } = b;
  return g.sub(indicator(g, g.greater(x, 0)), indicator(g, g.less(x, 0)));
}

/** SAPO: −(4/τ)·σ(τ·(r − 1))·A per token, τ by the sign of A. */
export function sapoTokens(c: SurrogateContext, loss: SurrogateOptions, ratio: Tensor): Tensor {
  const { g, hp } = c.b;
  const tauPos = hp('tau_pos', loss.tauPos);
  const tauNeg = hp('tau_neg', loss.tauNeg);
  const tau = g.where(g.greater(c.adv, 0), tauPos, tauNeg);
  const gate = g.div(g.mul(sigmoid(c.b, g.mul(tau, g.sub(ratio, 1))), 4), tau);
  return g.neg(g.mul(gate, c.adv));
}

/**
 * GMPO: −A·s·exp(ℓ_t − sg(ℓ_t)) per token, ℓ_t the sign-clipped log-ratio and s = exp(mean of ℓ
 * over the sequence's policy tokens), which `seqMean` returns detached and broadcast per token.
 */
export function gmpoTokens(c: SurrogateContext, seqMean: (x: Tensor) => Tensor): Tensor {
  const { g } = c.b;
  const sgn = sign(c.b, c.adv);
  const clamped = g.minimum(g.maximum(c.logRatio, g.neg(c.clipLow)), c.clipHigh);
  // The clip binds only in A's direction (as PPO's min does): for A > 0 above ε_high, for A < 0 below −ε_low.
  const l = g.mul(sgn, g.minimum(g.mul(sgn, c.logRatio), g.mul(sgn, clamped)));
  const s = g.exp(seqMean(l));
  return g.neg(g.mul(g.mul(c.adv, s), g.exp(g.sub(l, g.stopGradient(l)))));
}

/** Clip-Cov: the selected tokens' loss (and gradient) is 0; KL-Cov: + coef·|log r| on them. */
export function covarianceTokens(c: SurrogateContext, loss: SurrogateOptions, pg: Tensor): Tensor {
  const { g, inp, hp } = c.b;
  const sel = inp(COV_MASK);
  if (loss.covariance === 'clip-cov') return g.mul(pg, g.sub(1, sel));
  const coef = hp('cov_kl_coef', loss.covKlCoef);
  // |x| as x·sign(x): gradient sign(x), 0 at x = 0 (PyTorch's abs), so at ratio 1 it adds nothing.
  const absKl = g.mul(c.logRatio, sign(c.b, c.logRatio));
  return g.add(pg, g.mul(g.mul(sel, absKl), coef));
}
