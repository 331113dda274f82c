/**
 * What runs a policy model, as interfaces: the learner that trains it, the runner that evaluates
 * it in batches, the KV-cached decoder that samples from it, and the factory of the two
 * inference kinds. The update loop and the rollouts drive these; an Engine (engine/types.ts)
 * makes them. They sit with the models rather than the engine because an Engine's learner is
 * built from the train step's options (update/trainStep.ts), and the update loop must not
 * depend back on that.
 */
import type { PolicyModel, Weights } from './types.ts';

export type Feed = Float32Array | Int32Array;

export interface LearnerStep {
  /** Scalar metrics by key ('actor/pg_loss', 'actor/entropy', 'actor/grad_norm', 'train/finite', ...). */
  metrics: Record<string, number>;
  /** False when the NaN guard skipped the update (weights unchanged). */
  applied: boolean;
  /** log π(action) at the pre-update weights, per row/position. */
  logprobs: Float32Array;
  /** V(s) at the pre-update weights, per row (value-head models). */
  values?: Float32Array;
}

/**
 * A learner's whole carried state, for checkpoints: every state tensor of the train-step graph
 * by input name (parameters, then the flat Adam moments `adam.m`, `adam.v` [N] and the step
 * count `adam.step` [1], all float32), and the number of applied updates.
 */
export interface LearnerState {
  tensors: Record<string, Float32Array>;
  updates: number;
}

/** Runs train steps on a static batch; keeps weights and optimizer state in place. */
export interface Learner {
  /** Rows (MLP) or sequences (transformer) per step; pad with weight 0 and mask 0. */
  readonly batch: number;
  /**
   * Sequence lengths step() takes besides the model's context (ascending; the last is the
   * context). Absent or empty: full-length sequences only.
   */
  readonly seqLens?: readonly number[];
  /**
   * When set, step() also takes `prefixGroups` groups of batch / prefixGroups sequences that
   * share a prefix of ≤ prefixLen tokens (one of seqLens), run once per group; seqLen is then
   * the suffix length and the feeds follow TransformerPolicy.withSharedPrefix.
   */
  readonly prefixGroups?: number;
  /** Live scalar hyperparameters (lr, clip_low, clip_high, entropy_coef, kl_coef, ...): edit between steps. */
  readonly hyper: Record<string, number>;
  /** One optimizer step; feeds are [batch] rows, or [batch, seqLen] sequences (seqLen one of seqLens; default the context). */
  step(batch: Readonly<Record<string, Feed>>, seqLen?: number, prefixLen?: number): Promise<LearnerStep>;
  getWeights(): Promise<Weights>;
  setWeights(weights: Weights, resetOptimizer?: boolean): void;
  /** Copies of the whole carried state (checkpoints). Absent on learners that cannot export it (test stubs). */
  exportState?(): Promise<LearnerState>;
  /** Replaces the whole carried state with exportState()'s output; throws, changing nothing, on a mismatch. */
  importState?(state: LearnerState): void;
  release(): Promise<void>;
}

/** Rollout-side inference at a fixed batch size: outputs 'logprobs' [B, ..., A] and 'value' [B, ...]. */
export interface PolicyRunner {
  readonly batch: number;
  version: number;
  setWeights(weights: Weights, version: number): void;
  run(inputs: Readonly<Record<string, Feed>>): Promise<Record<string, Float32Array>>;
  release(): Promise<void>;
}

/**
 * Incremental (KV-cached) decoding for token policies at a fixed batch of rows. Each call feeds
 * `step` tokens per row at per-row start positions; keys/values of every fed token stay in the
 * decoder's cache, so a multi-turn episode never recomputes earlier turns. A decoder may support
 * several call sizes over one shared cache (`steps`): 1 for sampling, a larger chunk to prefill
 * observations in fewer calls.
 *
 * Rows are independent: a row's cache slot j is visible to a query at position p only if j ≤ p,
 * and feeding positions 0..p overwrites slots 0..p. So restarting a row at position 0 is a
 * complete per-row reset (stale slots past the row's position are masked, then overwritten),
 * and padding after a row's real tokens in a chunk is harmless for the same reason.
 */
export interface TokenDecoder {
  /** Rows B. */
  readonly batch: number;
  /** Supported tokens-per-row per call, ascending, 1 first. */
  readonly steps: readonly number[];
  /** Longest context (positions 0..context−1). */
  readonly context: number;
  /** Vocabulary size V (last dimension of `logprobs`). */
  readonly vocab: number;
  /** Policy version of the loaded weights. */
  version: number;
  /**
   * Forget cached context: all rows, or only `rows`. Per-row reset is free (see above): the
   * caller restarts those rows at position 0.
   */
  reset(rows?: readonly number[]): void;
  /**
   * Feed tokens int32 [B·S] (row-major, S = `step`, one of `steps`) at positions pos int32 [B]
   * (first new token of each row; pos + S ≤ context). Returns log-probs [B, S, V] (position s
   * scores the token after it) and values [B, S] for value-head models. The cache advances in
   * place.
   */
  next(tokens: Int32Array, pos: Int32Array, step?: number): Promise<{ logprobs: Float32Array; value?: Float32Array }>;
  /** Load new weights (the cache is kept: callers reset when a cached prefix must be rescored). */
  setWeights(weights: Weights, version: number): void;
  /**
   * Copies row `from`'s cached keys/values at positions 0..length−1 into row `to`, so episodes
   * that share a prompt (a GRPO group) prefill it once. Absent where the cache cannot be copied
   * cheaply (caches resident on a GPU).
   */
  readonly copyPrefix?: (from: number, to: number, length: number) => void;
  release(): Promise<void>;
}

/** The inference half of an Engine: batched runners and KV-cached decoders for a model. */
export interface InferenceEngine {
  /** `seqLen`: positions per sequence of a sequence model's runner (default its context). */
  createPolicy(model: PolicyModel, batch: number, weights: Weights, seqLen?: number): Promise<PolicyRunner>;
  /**
   * A KV-cached decoder for a transformer policy with `batch` rows: one-token calls, plus
   * `prefillStep`-token calls over the same cache when given (> 1).
   */
  createDecoder(model: PolicyModel, batch: number, weights: Weights, prefillStep?: number): Promise<TokenDecoder>;
}
