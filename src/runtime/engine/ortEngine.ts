/**
 * The trainer's Engine (src/core/engine/types.ts) on ONNX Runtime: any ORT module with the
 * common InferenceSession/Tensor API (onnxruntime-web WASM or WebGPU, onnxruntime-node).
 */
import { buildTrainStep, type TrainStepOptions } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import type { PolicyModel, Weights } from '../../core/models/types.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import type { Engine, Feed, Learner, LearnerState, LearnerStep, PolicyRunner, TokenDecoder } from '../../core/engine/types.ts';
import type * as Ort from 'onnxruntime-web';
import { PolicySession, TrainSession, type OrtModule, type OrtSessionOptions, type PolicySessionOptions } from '../ort/session.ts';

class OrtLearner implements Learner {
  constructor(
    private readonly session: TrainSession,
    readonly seqLens: readonly number[],
    readonly prefixGroups?: number,
  ) {}
  get batch(): number {
    return this.session.spec.batch;
  }
  get hyper(): Record<string, number> {
    return this.session.hyper;
  }
  step(batch: Readonly<Record<string, Feed>>, seqLen?: number, prefixLen?: number): Promise<LearnerStep> {
    if (seqLen !== undefined && !this.seqLens.includes(seqLen)) throw new RangeError(`Learner.step: seqLen ${seqLen} is not one of [${this.seqLens.join(', ')}]`);
    if (prefixLen !== undefined && (this.prefixGroups === undefined || !this.seqLens.includes(prefixLen))) {
      throw new RangeError(`Learner.step: prefixLen ${prefixLen} needs a learner made with prefixGroups and one of [${this.seqLens.join(', ')}]`);
    }
    return this.session.step(batch, seqLen, prefixLen);
  }
  getWeights(): Promise<Weights> {
    return this.session.getWeights();
  }
  setWeights(weights: Weights, resetOptimizer = true): void {
    this.session.setWeights(weights, resetOptimizer);
  }
  exportState(): Promise<LearnerState> {
    return this.session.getState();
  }
  importState(state: LearnerState): void {
    this.session.setState(state);
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
 * TokenDecoder on ORT: one decode graph per call size (1, and a prefill chunk), all reading and
 * writing one shared KV cache. (KvDecoder holds its cache privately, one graph per cache, so it
 * cannot share a cache between call sizes; this class does the same bookkeeping for several.)
 * Per-row reset needs no work: a row restarted at position 0 overwrites its slots as it goes
 * and the causal mask hides the stale ones (tested in tokenRollout.test.ts).
 */
type OrtTensor = Ort.Tensor;

class OrtTokenDecoder implements TokenDecoder {
  private cache: Record<string, OrtTensor> = {};
  /** 'delta' layout (CPU): the cache arrays, written in place with each call's new keys/values. */
  private arrays: Record<string, Float32Array> = {};
  version = 0;
  readonly steps: readonly number[];
  readonly copyPrefix?: (from: number, to: number, length: number) => void;

  constructor(
    private readonly ort: OrtModule,
    private readonly model: TransformerPolicy,
    readonly batch: number,
    private readonly sessions: ReadonlyMap<number, PolicySession>,
    private readonly location: 'cpu' | 'gpu-buffer',
    /** The decode graphs' cache layout (TransformerPolicy.buildDecodeGraph). */
    private readonly layout: 'full' | 'delta',
  ) {
    this.steps = [...sessions.keys()].sort((a, b) => a - b);
    this.reset();
    if (layout === 'delta') this.copyPrefix = (from, to, length) => this.copyDelta(from, to, length);
  }

  /** copyPrefix on the CPU layout: K [B,H,dh,Tmax] (a strided run per h, e), V [B,H,Tmax,dh] (one block per h). */
  private copyDelta(from: number, to: number, length: number): void {
    const [B, H, Tmax, dh] = this.model.cacheShape(this.batch);
    for (const r of [from, to]) if (!Number.isInteger(r) || r < 0 || r >= B) throw new RangeError(`TokenDecoder.copyPrefix: row ${r} is not in 0..${B - 1}`);
    if (!Number.isInteger(length) || length < 0 || length > Tmax) throw new RangeError(`TokenDecoder.copyPrefix: length ${length} is not in 0..${Tmax}`);
    if (from === to || length === 0) return;
    for (let l = 0; l < this.model.config.nLayers; l++) {
      const K = this.arrays[`past.k.${l}`];
      const V = this.arrays[`past.v.${l}`];
      for (let h = 0; h < H; h++) {
        for (let e = 0; e < dh; e++) {
          const src = ((from * H + h) * dh + e) * Tmax;
          K.copyWithin(((to * H + h) * dh + e) * Tmax, src, src + length);
        }
        const src = (from * H + h) * Tmax * dh;
        V.copyWithin((to * H + h) * Tmax * dh, src, src + length * dh);
      }
    }
  }

  get context(): number {
    return this.model.config.context;
  }
  get vocab(): number {
    return this.model.config.vocabSize;
  }

  reset(rows?: readonly number[]): void {
    if (rows !== undefined) return; // rows restart at position 0: nothing to clear
    const [B, H, Tmax, dh] = this.model.cacheShape(this.batch);
    for (const t of Object.values(this.cache)) if (t.location !== 'cpu') t.dispose();
    this.cache = {};
    this.arrays = {};
    for (const [k, v] of Object.entries(this.model.emptyCache(this.batch))) {
      if (this.layout === 'delta') {
        this.arrays[k] = v;
        this.cache[k] = new this.ort.Tensor('float32', v, k.startsWith('past.k.') ? [B, H, dh, Tmax] : [B, H, Tmax, dh]);
      } else this.cache[k] = new this.ort.Tensor('float32', v, [B, H, Tmax, dh]);
    }
  }

  /** Writes a call's new keys [B,H,dh,S] and values [B,H,S,dh] into the cache at pos..pos+S−1. */
  private writeDelta(res: Record<string, OrtTensor>, pos: Int32Array, S: number): void {
    const [B, H, Tmax, dh] = this.model.cacheShape(this.batch);
    for (let l = 0; l < this.model.config.nLayers; l++) {
      const K = this.arrays[`past.k.${l}`];
      const V = this.arrays[`past.v.${l}`];
      const nk = res[`new.k.${l}`].data as Float32Array;
      const nv = res[`new.v.${l}`].data as Float32Array;
      for (let b = 0; b < B; b++) {
        const n = Math.min(S, Tmax - pos[b]);
        for (let h = 0; h < H; h++) {
          const bh = b * H + h;
          for (let s = 0; s < n; s++) {
            const p = pos[b] + s;
            for (let e = 0; e < dh; e++) K[(bh * dh + e) * Tmax + p] = nk[(bh * dh + e) * S + s];
            V.set(nv.subarray((bh * S + s) * dh, (bh * S + s + 1) * dh), (bh * Tmax + p) * dh);
          }
        }
      }
    }
  }

  async next(tokens: Int32Array, pos: Int32Array, step = 1): Promise<{ logprobs: Float32Array; value?: Float32Array }> {
    const B = this.batch;
    const session = this.sessions.get(step);
    if (!session) throw new RangeError(`TokenDecoder.next: step ${step} is not one of ${this.steps.join(', ')}`);
    if (tokens.length !== B * step || pos.length !== B) {
      throw new RangeError(`TokenDecoder.next: expected ${B * step} tokens and ${B} positions, got ${tokens.length} and ${pos.length}`);
    }
    const res = await session.runRaw({ tokens, pos, ...this.cache });
    if (this.layout === 'delta') this.writeDelta(res, pos, step);
    else {
      for (const k of Object.keys(this.cache)) {
        if (this.location !== 'cpu') this.cache[k].dispose();
        this.cache[k] = res[k.replace('past.', 'present.')];
      }
    }
    const read = async (t: OrtTensor) => Float32Array.from((t.location === 'cpu' ? t.data : await t.getData()) as Float32Array);
    const out: { logprobs: Float32Array; value?: Float32Array } = { logprobs: await read(res.logprobs) };
    if (res.value) out.value = await read(res.value);
    return out;
  }

  setWeights(weights: Weights, version: number): void {
    for (const s of this.sessions.values()) s.setWeights(weights, version);
    this.version = version;
  }

  async release(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.release()));
  }
}

/**
 * Policy runners on CPU/WASM bake their weights in after this many calls at one set of weights,
 * or at once when the previous weights got twice as many (PolicySessionOptions.bakeAfterRuns).
 * A rebuild costs about as much as ~100 calls save (MLP rollouts, ort-web WASM); rollout runners
 * make hundreds of calls per version early in training, proximal/scoring runners a few.
 */
const BAKE_AFTER_RUNS = 64;

export function ortEngine(ort: OrtModule, name: string, options: OrtSessionOptions = {}): Engine {
  // WebGPU runners keep feeding weights: baking there is unmeasured, and its sessions cost more to build.
  const policyOptions: PolicySessionOptions = options.stateLocation === 'gpu-buffer' ? options : { ...options, bakeAfterRuns: BAKE_AFTER_RUNS };
  return {
    name,
    async createLearner(model: PolicyModel, opts: TrainStepOptions, weights: Weights, seqLens: readonly number[] = [], prefixGroups?: number): Promise<Learner> {
      const lens = [...new Set(seqLens)].sort((a, b) => a - b);
      const full = model.leadShape(opts.batch)[1];
      if (lens.length > 0 && (full === undefined || lens.some((T) => !Number.isInteger(T) || T < 1 || T > full))) {
        throw new RangeError(`createLearner: seqLens must be whole numbers in 1..${full ?? '(a sequence model)'}, got [${seqLens.join(', ')}]`);
      }
      if (prefixGroups !== undefined && (!model.withSharedPrefix || lens.length === 0 || !Number.isInteger(prefixGroups) || prefixGroups < 1 || opts.batch % prefixGroups !== 0)) {
        throw new RangeError(`createLearner: prefixGroups ${prefixGroups} needs a sequence model, seqLens, and a batch (${opts.batch}) that is a multiple of it`);
      }
      const session = await TrainSession.create(ort, buildTrainStep(model, opts), weights, options, (T, P) =>
        buildTrainStep(model, { ...opts, seqLen: T, prefix: P === undefined ? undefined : { groups: prefixGroups!, length: P } }),
      );
      return new OrtLearner(session, lens.length > 0 && full !== undefined && lens[lens.length - 1] !== full ? [...lens, full] : lens, prefixGroups);
    },
    async createPolicy(model: PolicyModel, batch: number, weights: Weights, seqLen?: number): Promise<PolicyRunner> {
      return new OrtPolicy(await PolicySession.create(ort, buildPolicyGraph(model, batch, seqLen), weights, policyOptions), batch);
    },
    async createDecoder(model: PolicyModel, batch: number, weights: Weights, prefillStep = 1): Promise<TokenDecoder> {
      if (!(model instanceof TransformerPolicy)) throw new TypeError(`createDecoder: KV-cached decoding needs a transformer policy, got '${model.kind}'`);
      if (!Number.isInteger(prefillStep) || prefillStep < 1 || prefillStep > model.config.context) {
        throw new RangeError(`createDecoder: prefillStep must be a whole number in 1..${model.config.context}, got ${prefillStep}`);
      }
      const sizes = prefillStep > 1 ? [1, prefillStep] : [1];
      const location = options.stateLocation ?? 'cpu';
      // CPU caches take only each call's new keys/values back; GPU caches stay whole on the GPU.
      const layout = location === 'cpu' ? 'delta' : 'full';
      const sessions = new Map<number, PolicySession>();
      for (const s of sizes) sessions.set(s, await PolicySession.create(ort, model.buildDecodeGraph(batch, s, layout), weights, options));
      return new OrtTokenDecoder(ort, model, batch, sessions, location, layout);
    },
  };
}
