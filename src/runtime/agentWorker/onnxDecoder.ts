/**
 * A TokenDecoder over a shipped token policy: the ONNX file `npm run train` writes for a
 * transformer (its KV-cache decode graph, 'full' cache layout, weights baked in, batch 1, one
 * token per call). Inputs: tokens int32 [1, 1], pos int32 [1], past.k.l / past.v.l float32
 * [1, H, Tmax, dh]; outputs: logprobs [1, 1, V] and present.k.l / present.v.l (the cache with
 * this call's slot written), which become the next call's past. Works with onnxruntime-web (the
 * page's agent worker) and onnxruntime-node alike: only `run` and the Tensor constructor are used.
 */
import type { TokenDecoder } from '../../core/engine/types.ts';
import type { TokenAgent } from '../../core/agents/manifest.ts';

/** The slice of an ONNX runtime module this needs (onnxruntime-web and -node both fit). */
export interface OrtLike {
  Tensor: new (type: 'float32' | 'int32', data: Float32Array | Int32Array, dims: readonly number[]) => unknown;
}
export interface SessionLike {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown }>>;
  release(): Promise<void>;
}

export class ShippedTokenDecoder implements TokenDecoder {
  readonly batch = 1;
  readonly steps = [1] as const;
  readonly context: number;
  readonly vocab: number;
  version = 0;
  private cache: Record<string, unknown> = {};
  private readonly shape: readonly number[];

  constructor(
    private readonly ort: OrtLike,
    private readonly session: SessionLike,
    private readonly model: TokenAgent['model'],
  ) {
    const { nHeads: H, dModel: d, context: T, nLayers: L } = model;
    this.context = T;
    this.vocab = model.vocabSize;
    this.shape = [1, H, T, d / H];
    const want = ['tokens', 'pos', ...Array.from({ length: L }, (_, l) => [`past.k.${l}`, `past.v.${l}`]).flat()];
    const missing = want.filter((n) => !session.inputNames.includes(n));
    if (missing.length > 0 || !session.outputNames.includes('logprobs')) {
      throw new Error(`this ONNX file is not a token policy's decode graph: inputs ${session.inputNames.join(', ')} (missing ${missing.join(', ') || 'none'}), outputs ${session.outputNames.join(', ')}`);
    }
    this.reset();
  }

  /** An empty cache (zeros): the causal mask hides every slot not yet written. */
  reset(): void {
    const n = this.shape.reduce((a, b) => a * b, 1);
    this.cache = {};
    for (let l = 0; l < this.model.nLayers; l++) {
      this.cache[`past.k.${l}`] = new this.ort.Tensor('float32', new Float32Array(n), this.shape);
      this.cache[`past.v.${l}`] = new this.ort.Tensor('float32', new Float32Array(n), this.shape);
    }
  }

  async next(tokens: Int32Array, pos: Int32Array, step = 1): Promise<{ logprobs: Float32Array }> {
    if (step !== 1 || tokens.length !== 1 || pos.length !== 1) throw new RangeError(`ShippedTokenDecoder.next: one token per call (got step ${step}, ${tokens.length} tokens)`);
    if (pos[0] < 0 || pos[0] >= this.context) throw new RangeError(`ShippedTokenDecoder.next: position ${pos[0]} is outside the context 0..${this.context - 1}`);
    const res = await this.session.run({
      tokens: new this.ort.Tensor('int32', Int32Array.from(tokens), [1, 1]),
      pos: new this.ort.Tensor('int32', Int32Array.from(pos), [1]),
      ...this.cache,
    });
    for (const k of Object.keys(this.cache)) this.cache[k] = res[k.replace('past.', 'present.')];
    return { logprobs: Float32Array.from(res.logprobs.data as Float32Array) };
  }

  setWeights(): void {
    throw new Error('ShippedTokenDecoder: the weights are baked into the file');
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
