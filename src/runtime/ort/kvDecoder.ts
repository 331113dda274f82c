/**
 * Token-by-token decoding with a key/value cache over an ORT session: each step feeds one
 * token and the cache the previous steps left, and keeps the cache it returns.
 */
import type * as Ort from 'onnxruntime-web';
import type { Weights } from '../../core/models/types.ts';
import type { TransformerPolicy } from '../../core/models/transformer.ts';
import { dispose, PolicySession, readFloat, type OrtModule, type OrtSessionOptions } from './session.ts';

/**
 * Incremental decoding for a TransformerPolicy: holds the KV cache between calls (as runtime
 * tensors) for a fixed batch of rows.
 */
export class KvDecoder {
  private cache: Record<string, Ort.Tensor> = {};

  private constructor(
    private readonly ort: OrtModule,
    readonly model: TransformerPolicy,
    readonly batch: number,
    readonly step: number,
    readonly policy: PolicySession,
    private readonly location: 'cpu' | 'gpu-buffer',
  ) {
    this.reset();
  }

  static async create(ort: OrtModule, model: TransformerPolicy, batch: number, step: number, weights: Weights, opts: OrtSessionOptions = {}): Promise<KvDecoder> {
    const policy = await PolicySession.create(ort, model.buildDecodeGraph(batch, step), weights, opts);
    return new KvDecoder(ort, model, batch, step, policy, opts.stateLocation ?? 'cpu');
  }

  /** Empty the cache (all rows). */
  reset(): void {
    const shape = this.model.cacheShape(this.batch);
    for (const t of Object.values(this.cache)) dispose(t);
    this.cache = {};
    for (const [k, v] of Object.entries(this.model.emptyCache(this.batch))) this.cache[k] = new this.ort.Tensor('float32', v, shape);
  }

  /**
   * Feed `step` tokens per row starting at positions `pos` [B]; returns log-probs [B, S, V]
   * (and values [B, S] with a value head). The cache advances in place.
   */
  async next(tokens: Int32Array, pos: Int32Array): Promise<{ logprobs: Float32Array; value?: Float32Array }> {
    const res = await this.policy.runRaw({ tokens, pos, ...this.cache });
    for (const k of Object.keys(this.cache)) {
      const present = res[k.replace('past.', 'present.')];
      if (this.location !== 'cpu') dispose(this.cache[k]);
      this.cache[k] = present;
    }
    const out: { logprobs: Float32Array; value?: Float32Array } = { logprobs: await readFloat(res.logprobs) };
    if (res.value) out.value = await readFloat(res.value);
    return out;
  }
}
