/**
 * The train-step graph: forward, loss, backward, global grad-norm clipping, Adam(W) and a NaN
 * guard, all in one ONNX model. Parameters, Adam moments and the step count are inputs; their
 * updated values are outputs (`next.<name>`), so a session feeds outputs straight back in and
 * the state never has to visit JS.
 *
 * The loss is Σ_t weight_t · ℓ_t over per-step positions t (one position per MLP row, one per
 * token for the transformer). Aggregation (token-, sequence- or constant-normalised) is decided
 * upstream by the weights (src/core/update/batchAdvantages.ts `aggregationWeightsOf`); `mask` only
 * selects positions for the metrics (entropy, KL, clip fractions are means over mask = 1).
 *
 * Scalar hyperparameters (learning rate, clip ranges, coefficients) are graph inputs, so they can
 * change between steps without rebuilding; structural choices (which loss, which KL estimator,
 * whether a reference policy is fed) are baked into the graph.
 */
import { Graph, type Tensor } from '../graph/builder.ts';
import { entropyFromLogp, indicator, logSoftmax, maskedMean, selectLogprob } from '../graph/nn.ts';
import { declareParams, type PolicyModel } from '../models/types.ts';
import type { DType } from '../graph/proto.ts';
import { DISTILL_LOSS_DEFAULTS, reverseKl, TEACHER_LOGPROBS, type DistillLoss } from './distillLoss.ts';
import { covarianceTokens, gmpoTokens, sapoTokens, type CovarianceMode, type PgObjective } from './surrogates.ts';

/**
 * The train-step graph's scalar inputs (fed as `hp.<name>` each step, so they can change while
 * a run trains), keyed by the loss or Adam option that sets them. Live edits (update/hyper.ts)
 * and the graph both read their names from here.
 */
export const HYPER_INPUTS = {
  tisCap: 'tis_cap',
  clipLow: 'clip_low',
  clipHigh: 'clip_high',
  entropyCoef: 'entropy_coef',
  klCoef: 'kl_coef',
  valueCoef: 'value_coef',
  valueClip: 'value_clip',
  lr: 'lr',
  beta1: 'beta1',
  beta2: 'beta2',
  eps: 'eps',
  weightDecay: 'weight_decay',
  maxGradNorm: 'max_grad_norm',
  tauPos: 'tau_pos',
  tauNeg: 'tau_neg',
  covKlCoef: 'cov_kl_coef',
} as const;

export type HyperInput = (typeof HYPER_INPUTS)[keyof typeof HYPER_INPUTS];

/** Clipped policy-gradient surrogate (PPO / GRPO / DAPO family), plus value loss for value heads. */
export interface PolicyGradientLoss {
  kind: 'policy-gradient';
  /**
   * 'clip': PPO's −min(r·A, clip(r)·A), which zeroes the gradient of tokens whose ratio left the
   * trust region in A's direction. 'cispo': −sg(clip(r, 1 − ε_low, 1 + ε_high))·A·log π, the
   * importance weight clipped and detached, so every token keeps a gradient (MiniMax-M1's CISPO).
   * 'gspo': the clipped surrogate on the sequence's ratio s = exp(mean over its policy tokens of
   * log π − log π_old), each token's ratio being sg(s)·π/sg(π) (GSPO-token, Qwen3). A row of a
   * [B, T] lead is one sequence; a flat [N] lead (grid steps) feeds `seq_ids` [N] (int32 episode
   * index of each row, < N) to say which rows form a sequence. 'sapo' and 'gmpo': update/surrogates.ts
   * (SAPO's soft gate; GMPO's geometric mean of sign-clipped token ratios, sequences as for 'gspo').
   * Default 'clip'.
   */
  objective: PgObjective;
  /** SAPO's gate temperature τ for tokens with A > 0 (larger = narrower trust region). Default 1. */
  tauPos: number;
  /** SAPO's gate temperature τ for tokens with A < 0 (the paper keeps it above tauPos). Default 1.05. */
  tauNeg: number;
  /**
   * Covariance-based entropy control on top of the objective (update/surrogates.ts): feeds
   * `cov_mask` [...lead] (1 = the token was selected). 'clip-cov' zeroes the selected tokens'
   * loss; 'kl-cov' adds covKlCoef·|log π − log π_old| to it. Default 'off'.
   */
  covariance: CovarianceMode;
  /** KL-Cov's coefficient on |log π − log π_old| of the selected tokens (veRL ppo_kl_coef). Default 1. */
  covKlCoef: number;
  /** ε_low: the ratio is clipped below at 1 − ε_low. Default 0.2. */
  clipLow: number;
  /** ε_high: the ratio is clipped above at 1 + ε_high (DAPO clip-higher uses 0.28). Default 0.2. */
  clipHigh: number;
  /** Feed `ref_logprobs` and add klCoef · KL(π‖π_ref) per token to the loss. Default false. */
  useReference: boolean;
  /** Coefficient of the KL-to-reference term (only with useReference). Default 0.001. */
  klCoef: number;
  /** KL estimator for the loss term: k1 = log π − log π_ref, k3 = r − 1 − log r with r = π_ref/π (unbiased, ≥ 0). Default 'k3'. */
  klEstimator: 'k1' | 'k3';
  /** Entropy bonus coefficient: the loss gets −entropyCoef · Σ w·H. Default 0. */
  entropyCoef: number;
  /** Value-loss coefficient: + valueCoef · ½ · mean_mask (V − R)² (models with a value head). Default 0.5. */
  valueCoef: number;
  /**
   * PPO value clipping: with c set, feed `old_values` (V at rollout) and the value term becomes
   * ½ · mean_mask max((V − R)², (V_old + clip(V − V_old, −c, c) − R)²), so one update cannot move
   * V far from where the advantages were computed (PPO2 / CleanRL clip_vloss). null = unclipped.
   * Default null.
   */
  valueClip: number | null;
  /**
   * Where π_old of the ratio comes from. 'fed': `old_logprobs`. 'self' also feeds `prox_mask`
   * (stale tokens): there π_old is the learner's own log-prob at this step's weights
   * (stop-gradient: decoupled PPO's proximal policy without a second forward pass), `old_logprobs`
   * holds the behaviour μ, and the advantage is multiplied by min(π_old/μ, tis_cap) (truncated
   * importance sampling). Decoupled PPO's π_prox is the weights before the update, fixed for all
   * of it: 'self' is that only when the update is this one step (update/offPolicy.ts
   * `learnerIsProximal`). Default 'fed'.
   */
  proximal: 'fed' | 'self';
  /** Truncation cap of the IS weight with proximal 'self'. Default 2. */
  tisCap: number;
}

/** Supervised cross-entropy on given actions/tokens (imitation of an expert; warm start). */
export interface ImitationLoss {
  kind: 'imitation';
  /** Entropy bonus coefficient (usually 0 for imitation). Default 0. */
  entropyCoef: number;
}

export type LossSpec = PolicyGradientLoss | ImitationLoss | DistillLoss;

export const PG_LOSS_DEFAULTS: PolicyGradientLoss = {
  kind: 'policy-gradient',
  objective: 'clip',
  clipLow: 0.2,
  clipHigh: 0.2,
  useReference: false,
  klCoef: 0.001,
  klEstimator: 'k3',
  entropyCoef: 0,
  valueCoef: 0.5,
  valueClip: null,
  proximal: 'fed',
  tisCap: 2,
  tauPos: 1,
  tauNeg: 1.05,
  covariance: 'off',
  covKlCoef: 1,
};

export const IMITATION_LOSS_DEFAULTS: ImitationLoss = { kind: 'imitation', entropyCoef: 0 };

/** Adam with bias correction, optional decoupled weight decay (AdamW) and global-norm clipping. */
export interface AdamConfig {
  /** Learning rate. Default 3e-4. */
  lr: number;
  /** First-moment decay β1. Default 0.9. */
  beta1: number;
  /** Second-moment decay β2. Default 0.999. */
  beta2: number;
  /** Denominator epsilon (added to √v̂). Default 1e-8. */
  eps: number;
  /** Decoupled weight decay λ (p ← p − lr·λ·p) on matrices only. Default 0. */
  weightDecay: number;
  /** Rescale the gradient so its global L2 norm is at most this; ≤ 0 disables. Default 1.0. */
  maxGradNorm: number;
}

export const ADAM_DEFAULTS: AdamConfig = { lr: 3e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1.0 };

export interface IoSpec {
  name: string;
  shape: number[];
  dtype: DType;
}

/** A train-step graph and what a session needs to drive it. */
export interface TrainStepGraph {
  graph: Graph;
  model: PolicyModel;
  batch: number;
  /** Per-step shape of the loss inputs ([B] or [B, T]). */
  lead: number[];
  /** Carried state: feed `output` back as `input` after every step. Params, then flat m, v, step. */
  state: { input: string; output: string; shape: number[]; kind: 'param' | 'adam_m' | 'adam_v' | 'step' }[];
  /** Where each parameter sits in the flat Adam moment vectors `adam.m` / `adam.v`. */
  flatLayout: { name: string; offset: number; size: number }[];
  /** Per-batch data the caller supplies each step. */
  batchInputs: IoSpec[];
  /** Scalar hyperparameter inputs with their configured values. */
  hyper: Record<string, number>;
  /** Scalar metric outputs: ONNX output name → metric key (ARCHITECTURE.md, 'Metric names'). */
  metrics: Record<string, string>;
  /** Per-position outputs at the pre-update weights: `logprobs` [...lead] (and `values`). */
  perStep: string[];
}

export interface TrainStepOptions {
  /** Rows (MLP) or sequences (transformer) per step. */
  batch: number;
  /** Positions per sequence (sequence models; ≤ the context, default the context). */
  seqLen?: number;
  /**
   * Sequence models: the batch is `groups` groups whose sequences share a prefix of ≤ `length`
   * tokens, run once per group; seqLen is then each sequence's suffix (PolicyModel.withSharedPrefix).
   */
  prefix?: { groups: number; length: number };
  loss?: (Partial<PolicyGradientLoss> & { kind: 'policy-gradient' }) | (Partial<ImitationLoss> & { kind: 'imitation' }) | (Partial<DistillLoss> & { kind: 'distill' });
  adam?: Partial<AdamConfig>;
  /** Also output the raw (unclipped) gradients as `grad.<param>` (for gradient checks). Default false. */
  exposeGradients?: boolean;
  /**
   * Constrained decoding: feed `logit_mask` [...lead, A], added to the logits before the
   * log-softmax (0 = allowed, LOGIT_MASKED = masked), so every log-prob, the entropy and the KL
   * terms are those of the masked policy the rollout sampled from. Default false.
   */
  logitMask?: boolean;
}

/** The additive logit of a masked action: exp(−1e9 − max) is exactly 0 in float32, and every term stays finite. */
export const LOGIT_MASKED = -1e9;
/** The train graph's additive logit mask input (TrainStepOptions.logitMask). */
export const LOGIT_MASK = 'logit_mask';

/** State input names for a parameter. */
/** Flat Adam moment inputs (layout in TrainStepGraph.flatLayout). */
export const ADAM_M = 'adam.m';
export const ADAM_V = 'adam.v';
export const next = (name: string) => `next.${name}`;
export const STEP = 'adam.step';

export function buildTrainStep(base: PolicyModel, opts: TrainStepOptions): TrainStepGraph {
  if (opts.prefix && !base.withSharedPrefix) throw new TypeError(`buildTrainStep: a '${base.kind}' model cannot share prefixes`);
  const model = opts.prefix ? base.withSharedPrefix!(opts.prefix.groups, opts.prefix.length) : base;
  const loss: LossSpec =
    opts.loss?.kind === 'imitation'
      ? { ...IMITATION_LOSS_DEFAULTS, ...opts.loss }
      : opts.loss?.kind === 'distill'
        ? { ...DISTILL_LOSS_DEFAULTS, ...opts.loss }
        : { ...PG_LOSS_DEFAULTS, ...(opts.loss ?? {}), kind: 'policy-gradient' };
  const adam: AdamConfig = { ...ADAM_DEFAULTS, ...opts.adam };
  const B = opts.batch;
  const g = new Graph(`train_${model.kind}_${loss.kind}`);
  const P = declareParams(g, model);
  const obs = model.declareObservations(g, B, opts.seqLen);
  const lead = model.leadShape(B, opts.seqLen);
  const batchInputs: IoSpec[] = Object.values(obs).map((t) => ({ name: t.name, shape: [...t.shape], dtype: t.dtype }));
  const hyper: Partial<Record<HyperInput, number>> = {};
  const inp = (name: string, dtype: DType = 'float32', last: number[] = []): Tensor => {
    const t = g.input(name, [...lead, ...last], dtype);
    batchInputs.push({ name, shape: [...lead, ...last], dtype });
    return t;
  };
  const hp = (name: HyperInput, value: number): Tensor => {
    hyper[name] = value;
    return g.input(`hp.${name}`, []);
  };
  const metrics: Record<string, string> = {};
  const metric = (t: Tensor, name: string, key: string) => {
    g.output(t, name);
    metrics[name] = key;
  };
  const b: StepBuild = { g, lead, inp, hp, metric };

  // ---- forward and per-position quantities
  const out = model.forward(g, P, obs);
  const A = out.logits.shape[out.logits.shape.length - 1];
  const logp = logSoftmax(g, opts.logitMask ? g.add(out.logits, inp(LOGIT_MASK, 'float32', [A])) : out.logits); // [...lead, A]
  const actions = inp('actions', 'int32');
  const weights = inp('weights');
  const mask = inp('mask');
  const lp = selectLogprob(g, logp, actions); // [...lead]
  const ent = entropyFromLogp(g, logp);
  const wsum = (x: Tensor) => g.reduceSum(g.mul(x, weights));

  const pos: Positions = { lp, ent, mask, wsum, value: out.value };
  const total = loss.kind === 'policy-gradient' ? policyGradientLoss(b, loss, pos) : loss.kind === 'imitation' ? imitationLoss(b, loss, pos) : distillLoss(b, loss, logp, pos);
  metric(total, 'loss', 'actor/loss');
  metric(maskedMean(g, ent, mask), 'entropy', 'actor/entropy');
  g.output(lp, 'logprobs');
  const perStep = ['logprobs'];
  if (out.value) {
    g.output(out.value, 'values');
    perStep.push('values');
  }

  const { state, flatLayout } = optimizerStep(b, model, P, total, adam, opts.exposeGradients ?? false);
  return { graph: g, model, batch: B, lead, state, flatLayout, batchInputs, hyper, metrics, perStep };
}

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
interface StepBuild {
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
interface Positions {
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
function policyGradientLoss(b: StepBuild, loss: PolicyGradientLoss, pos: Positions): Tensor {
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
function imitationLoss(b: StepBuild, loss: ImitationLoss, { lp, ent, mask, wsum }: Positions): Tensor {
  const { g, hp, metric } = b;
  const entCoef = hp(HYPER_INPUTS.entropyCoef, loss.entropyCoef);
  const ce = g.neg(wsum(lp));
  metric(ce, 'ce_loss', 'imitation/ce_loss');
  const total = g.sub(ce, g.mul(wsum(ent), entCoef));
  metric(maskedMean(g, g.exp(lp), mask), 'target_prob', 'imitation/target_prob_mean');
  return total;
}

/** klCoef · Σ w · KL(π‖π_teacher) over the full vocabulary (update/distillLoss.ts), and its per-token mean. */
function distillLoss(b: StepBuild, loss: DistillLoss, logp: Tensor, { mask, wsum }: Positions): Tensor {
  const { g, inp, hp, metric } = b;
  const teacher = inp(TEACHER_LOGPROBS, 'float32', [logp.shape[logp.shape.length - 1]]);
  const kl = reverseKl(g, logp, teacher);
  metric(maskedMean(g, kl, mask), 'distill_kl', 'distill/kl');
  return g.mul(wsum(kl), hp(HYPER_INPUTS.klCoef, loss.klCoef));
}

/**
 * Backward pass and the optimizer: global grad-norm clipping, Adam(W) with bias correction on one
 * flat vector of all parameters, and the NaN guard; declares the state inputs and outputs.
 */
function optimizerStep(b: StepBuild, model: PolicyModel, P: Record<string, Tensor>, total: Tensor, adam: AdamConfig, exposeGradients: boolean): Pick<TrainStepGraph, 'state' | 'flatLayout'> {
  const { g, hp, metric } = b;
  // ---- backward
  const params = model.params.map((p) => P[p.name]);
  const grads = g.grad(total, params);
  if (exposeGradients) model.params.forEach((p, i) => g.output(grads[i], `grad.${p.name}`));

  // ---- global grad-norm clipping: scale = maxNorm / ‖g‖ when ‖g‖ > maxNorm > 0, else 1
  const lr = hp(HYPER_INPUTS.lr, adam.lr);
  const beta1 = hp(HYPER_INPUTS.beta1, adam.beta1);
  const beta2 = hp(HYPER_INPUTS.beta2, adam.beta2);
  const eps = hp(HYPER_INPUTS.eps, adam.eps);
  const wd = hp(HYPER_INPUTS.weightDecay, adam.weightDecay);
  const maxNorm = hp(HYPER_INPUTS.maxGradNorm, adam.maxGradNorm);
  // The optimizer works on one flat vector of all parameters (decayed ones first): a handful of
  // large elementwise kernels instead of ~16 small ones per parameter tensor, which matters most
  // on WebGPU where every node is a dispatch. Params stay separate graph inputs/outputs (so a
  // policy session can share them); the Adam moments are the flat vectors `adam.m`, `adam.v`.
  const { order, flatLayout, N, nDecay } = flatParamLayout(model);
  const flatten = (ts: readonly Tensor[]) => (ts.length === 1 ? g.reshape(ts[0], [N]) : g.concat(order.map((i) => g.reshape(ts[i], [-1])), 0));
  const gFlat = flatten(grads);
  const pFlat = flatten(params);
  // g² is shared by the norm and the second moment.
  const gg = g.mul(gFlat, gFlat);
  const gradNorm = g.sqrt(g.reduceSum(gg));
  metric(gradNorm, 'grad_norm', 'actor/grad_norm');
  const doClip = g.mul(indicator(g, g.greater(gradNorm, maxNorm)), indicator(g, g.greater(maxNorm, 0)));
  const scale = g.add(g.mul(g.sub(g.div(maxNorm, g.add(gradNorm, 1e-12)), 1), doClip), 1);

  // ---- Adam(W) with bias correction; t = step + 1 is this update's index.
  // Every per-step scalar is folded before touching the big vectors (fewer elementwise passes):
  //   m' = β1·m + ((1−β1)·s)·g,  v' = β2·v + ((1−β2)·s²)·g²   (s = clip scale)
  //   p' = (1 − lr·λ)·p − (lr/bc1)·m' / (√v'/√bc2 + ε)          (bc_i = 1 − β_i^t)
  // and √v'/√bc2 + ε = (√v' + ε·√bc2)/√bc2, so the update is α·m'/(√v' + ε̂) with
  // α = lr·√bc2/bc1 and ε̂ = ε·√bc2: PyTorch's formulation, identical to the textbook one.
  const step = g.input(STEP, []);
  const t = g.add(step, 1);
  const bc1 = g.sub(1, g.node('Pow', [beta1, t], {}, [], 'float32'));
  const sqrtBc2 = g.sqrt(g.sub(1, g.node('Pow', [beta2, t], {}, [], 'float32')));
  const c1 = g.mul(g.sub(1, beta1), scale);
  const c2 = g.mul(g.sub(1, beta2), g.mul(scale, scale));
  const negAlpha = g.neg(g.div(g.mul(lr, sqrtBc2), bc1));
  const epsHat = g.mul(eps, sqrtBc2);
  const decayFactor = g.sub(1, g.mul(lr, wd));
  // Per-element decay factor: (1 − lr·λ) on the decayed prefix, 1 on the rest.
  const decay =
    nDecay === N ? decayFactor : nDecay === 0 ? null : g.concat([g.expand(decayFactor, [nDecay]), g.expand(g.scalar(1), [N - nDecay])], 0);
  const m = g.input(ADAM_M, [N]);
  const v = g.input(ADAM_V, [N]);
  const m2 = g.add(g.mul(m, beta1), g.mul(gFlat, c1));
  const v2 = g.add(g.mul(v, beta2), g.mul(gg, c2));
  const upd = g.mul(g.div(m2, g.add(g.sqrt(v2), epsHat)), negAlpha);
  const pRaw = g.add(decay ? g.mul(pFlat, decay) : pFlat, upd);

  // ---- NaN guard: x − x is 0 only for finite x. Any NaN/±Inf in the loss, the gradient norm or
  // the updated parameters fails it, and the step keeps every old value. Finite gradients can
  // still write Inf into the weights (lr 1e300, or ε so small that 0/0 appears); Σ p'·0 is NaN
  // exactly when some p' is. A finite gradient norm bounds every g², so m' and v' are finite then.
  const probe = g.add(g.add(total, gradNorm), g.reduceSum(g.mul(pRaw, 0)));
  const finite = g.equal(g.sub(probe, probe), g.scalar(0));
  metric(indicator(g, finite), 'finite', 'train/finite');
  const guard = (updated: Tensor, old: Tensor) => g.where(finite, updated, old);
  const pNext = guard(pRaw, pFlat);
  const state: TrainStepGraph['state'] = [];
  flatLayout.forEach((l, k) => {
    const spec = model.params[order[k]];
    g.output(g.reshape(g.slice(pNext, 0, l.offset, l.offset + l.size), spec.shape), next(spec.name));
  });
  for (const spec of model.params) state.push({ input: spec.name, output: next(spec.name), shape: [...spec.shape], kind: 'param' });
  g.output(guard(m2, m), next(ADAM_M));
  g.output(guard(v2, v), next(ADAM_V));
  g.output(g.where(finite, t, step), next(STEP));
  state.push(
    { input: ADAM_M, output: next(ADAM_M), shape: [N], kind: 'adam_m' },
    { input: ADAM_V, output: next(ADAM_V), shape: [N], kind: 'adam_v' },
    { input: STEP, output: next(STEP), shape: [], kind: 'step' },
  );
  return { state, flatLayout };
}

/** Where each parameter sits in the optimizer's flat vectors: weight-decayed ones first, in `order`. */
function flatParamLayout(model: PolicyModel): { order: number[]; flatLayout: TrainStepGraph['flatLayout']; N: number; nDecay: number } {
  const order = model.params.map((_, i) => i).sort((x, y) => Number(model.params[y].decay) - Number(model.params[x].decay));
  const flatLayout: TrainStepGraph['flatLayout'] = [];
  let N = 0;
  for (const i of order) {
    const size = model.params[i].shape.reduce((x, y) => x * y, 1);
    flatLayout.push({ name: model.params[i].name, offset: N, size });
    N += size;
  }
  const nDecay = flatLayout.filter((_, k) => model.params[order[k]].decay).reduce((s, l) => s + l.size, 0);
  return { order, flatLayout, N, nDecay };
}
