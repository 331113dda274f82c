/**
 * The trainer's Engine (src/core/trainer/engine.ts) on ONNX Runtime: any ORT module with the
 * common InferenceSession/Tensor API (onnxruntime-web WASM or WebGPU, onnxruntime-node).
 */
import { buildPolicyGraph, buildTrainStep, type TrainStepOptions } from '../../core/graph/train.ts';
import type { PolicyModel, Weights } from '../../core/models/types.ts';
import type { Engine, Feed, Learner, LearnerStep, PolicyRunner } from '../../core/trainer/engine.ts';
import { PolicySession, TrainSession, type OrtModule, type OrtSessionOptions } from '../ort/session.ts';

class OrtLearner implements Learner {
  constructor(private readonly session: TrainSession) {}
  get batch(): number {
    return this.session.spec.batch;
  }
  get hyper(): Record<string, number> {
    return this.session.hyper;
  }
  step(batch: Readonly<Record<string, Feed>>): Promise<LearnerStep> {
    return this.session.step(batch);
  }
  getWeights(): Promise<Weights> {
    return this.session.getWeights();
  }
  setWeights(weights: Weights, resetOptimizer = true): void {
    this.session.setWeights(weights, resetOptimizer);
  }
  release(): Promise<void> {
    return this.session.release();
  }
}

class OrtPolicy implements PolicyRunner {
  constructor(
    private readonly session: PolicySession,
    readonly batch: number,
  ) {}
  get version(): number {
    return this.session.version;
  }
  set version(v: number) {
    this.session.version = v;
  }
  setWeights(weights: Weights, version: number): void {
    this.session.setWeights(weights, version);
  }
  run(inputs: Readonly<Record<string, Feed>>): Promise<Record<string, Float32Array>> {
    return this.session.run(inputs);
  }
  release(): Promise<void> {
    return this.session.release();
  }
}

export function ortEngine(ort: OrtModule, name: string, options: OrtSessionOptions = {}): Engine {
  return {
    name,
    async createLearner(model: PolicyModel, opts: TrainStepOptions, weights: Weights): Promise<Learner> {
      return new OrtLearner(await TrainSession.create(ort, buildTrainStep(model, opts), weights, options));
    },
    async createPolicy(model: PolicyModel, batch: number, weights: Weights): Promise<PolicyRunner> {
      return new OrtPolicy(await PolicySession.create(ort, buildPolicyGraph(model, batch), weights, options), batch);
    },
  };
}
