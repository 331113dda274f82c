/**
 * The trainer's Engine (src/core/trainer/engine.ts) on ONNX Runtime: any ORT module with the
 * common InferenceSession/Tensor API (onnxruntime-web WASM or WebGPU, onnxruntime-node).
 */
import { buildPolicyGraph, buildTrainStep, type TrainStepOptions } from '../../core/graph/train.ts';
import type { PolicyModel, Weights } from '../../core/models/types.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import type { Engine, Feed, Learner, LearnerStep, PolicyRunner, TokenDecoder } from '../../core/trainer/engine.ts';
import { KvDecoder, PolicySession, TrainSession, type OrtModule, type OrtSessionOptions } from '../ort/session.ts';

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

/**
 * TokenDecoder over KvDecoder. KvDecoder has no per-row reset; none is needed: a row restarted
 * at position 0 overwrites its slots as it goes and the causal mask hides the stale ones
 * (tested in src/runtime/engine/tokenDecoder.test.ts).
 */
class OrtTokenDecoder implements TokenDecoder {
  constructor(private readonly kv: KvDecoder) {}
  get batch(): number {
    return this.kv.batch;
  }
  get step(): number {
    return this.kv.step;
  }
  get context(): number {
    return this.kv.model.config.context;
  }
  get vocab(): number {
    return this.kv.model.config.vocabSize;
  }
  get version(): number {
    return this.kv.policy.version;
  }
  set version(v: number) {
    this.kv.policy.version = v;
  }
  reset(rows?: readonly number[]): void {
    if (rows === undefined) this.kv.reset();
  }
  next(tokens: Int32Array, pos: Int32Array): Promise<{ logprobs: Float32Array; value?: Float32Array }> {
    const B = this.kv.batch;
    if (tokens.length !== B * this.kv.step || pos.length !== B) {
      throw new RangeError(`TokenDecoder.next: expected ${B * this.kv.step} tokens and ${B} positions, got ${tokens.length} and ${pos.length}`);
    }
    return this.kv.next(tokens, pos);
  }
  setWeights(weights: Weights, version: number): void {
    this.kv.policy.setWeights(weights, version);
  }
  release(): Promise<void> {
    return this.kv.policy.release();
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
    async createDecoder(model: PolicyModel, batch: number, weights: Weights, step = 1): Promise<TokenDecoder> {
      if (!(model instanceof TransformerPolicy)) throw new TypeError(`createDecoder: KV-cached decoding needs a transformer policy, got '${model.kind}'`);
      return new OrtTokenDecoder(await KvDecoder.create(ort, model, batch, step, weights, options));
    },
  };
}
