/**
 * What a train-step graph is asked for and what it hands back (update/trainStep.ts builds it):
 * the loss and Adam settings with their defaults, the scalar hyperparameter inputs, the input and
 * state names a session feeds, and the built graph's description.
 */
import type { DistillLoss } from './distillLoss.ts';
import type { PolicyModel } from '../models/types.ts';
import type { Graph } from '../graph/builder.ts';
import type { DType } from '../graph/proto.ts';
import type { CovarianceMode, PgObjective } from './surrogates.ts';

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
