/**
 * What the trainer needs from an execution engine, as interfaces: the core stays free of
 * onnxruntime, and src/runtime supplies implementations (ORT web WASM/WebGPU, ORT node).
 * One model definition feeds both sides, so the policy a rollout samples from and the policy
 * the learner differentiates compute the same function.
 */
import type { TrainStepOptions } from '../graph/train.ts';
import type { PolicyModel, Weights } from '../models/types.ts';

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

/** Runs train steps on a static batch; keeps weights and optimizer state in place. */
export interface Learner {
  /** Rows (MLP) or sequences (transformer) per step; pad with weight 0 and mask 0. */
  readonly batch: number;
  /** Live scalar hyperparameters (lr, clip_low, clip_high, entropy_coef, kl_coef, ...): edit between steps. */
  readonly hyper: Record<string, number>;
  step(batch: Readonly<Record<string, Feed>>): Promise<LearnerStep>;
  getWeights(): Promise<Weights>;
  setWeights(weights: Weights, resetOptimizer?: boolean): void;
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

export interface Engine {
  /** e.g. 'ort-web-wasm', 'ort-node', 'ort-web-webgpu'. */
  readonly name: string;
  createLearner(model: PolicyModel, opts: TrainStepOptions, weights: Weights): Promise<Learner>;
  createPolicy(model: PolicyModel, batch: number, weights: Weights): Promise<PolicyRunner>;
}
