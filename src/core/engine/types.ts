/**
 * What the trainer needs from an execution engine, as interfaces: the core stays free of
 * onnxruntime, and src/runtime supplies implementations (ORT web WASM/WebGPU, ORT node).
 * One model definition feeds both sides, so the policy a rollout samples from and the policy
 * the learner differentiates compute the same function.
 *
 * The things an Engine makes (learners, runners, decoders) are declared in models/runners.ts,
 * where the update loop and the rollouts read them without depending on the engine room;
 * they are re-exported here so an engine's implementers and callers import one module.
 */
import type { TrainStepOptions } from '../update/trainStep.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import type { InferenceEngine, Learner } from '../models/runners.ts';

export type { Feed, InferenceEngine, Learner, LearnerState, LearnerStep, PolicyRunner, TokenDecoder } from '../models/runners.ts';

export interface Engine extends InferenceEngine {
  /** e.g. 'ort-web-wasm', 'ort-node', 'ort-web-webgpu'. */
  readonly name: string;
  /**
   * `seqLens`: shorter sequence lengths the learner may also train on (each graph is built on first
   * use). `prefixGroups`: steps may also take that many groups sharing a prefix (Learner.prefixGroups).
   */
  createLearner(model: PolicyModel, opts: TrainStepOptions, weights: Weights, seqLens?: readonly number[], prefixGroups?: number): Promise<Learner>;
}
