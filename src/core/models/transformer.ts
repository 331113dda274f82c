/**
 * Tiny decoder-only transformer over the shared vocabulary: learned token and position
 * embeddings, pre-LN blocks (causal multi-head attention, GELU MLP), final LN, untied head,
 * optional value head. Two ways to run the same blocks:
 *
 * - `forward`: full causal pass over tokens [B, T] (training, and scoring whole sequences).
 * - `buildDecodeGraph`: incremental decoding with a fixed-size KV cache [B, H, Tmax, dh] per
 *   layer. S new tokens per call start at per-row positions `pos` [B]; their keys/values are
 *   written into the cache with a one-hot MatMul (no Scatter, so it runs on WebGPU) and every
 *   shape stays static. Cache slots past a row's current length hold garbage that the causal
 *   mask hides and that later writes overwrite, so padded prefill chunks are safe.
 */
import { Graph, type Tensor } from '../graph/builder.ts';
import { gelu, layerNorm, linear, logSoftmax } from '../graph/nn.ts';
import { VOCAB_SIZE } from '../text/codec.ts';
import { declareParams, type ModelOutputs, type ParamSpec, type PolicyModel } from './types.ts';

export interface TransformerConfig {
  /** Vocabulary size V. Default VOCAB_SIZE (the shared codec). */
  vocabSize: number;
  /** Residual width d. Default 64. */
  dModel: number;
  /** Number of blocks. Default 2. */
  nLayers: number;
  /** Attention heads; must divide dModel. Default 4. */
  nHeads: number;
  /** MLP hidden width. Default 4·dModel. */
  dFF: number;
  /** Maximum context length Tmax (positions 0..Tmax−1). Default 32. */
  context: number;
  /** Add a linear value head V(prefix) at every position. Default false. */
  valueHead: boolean;
  /** Layer-norm epsilon. Default 1e-5. */
  lnEps: number;
}

export const TRANSFORMER_DEFAULTS: TransformerConfig = {
  vocabSize: VOCAB_SIZE,
  dModel: 64,
  nLayers: 2,
  nHeads: 4,
  dFF: 256,
  context: 32,
  valueHead: false,
  lnEps: 1e-5,
};

/** Additive attention mask value; exp of it underflows to exactly 0 in float32. */
const MASKED = -1e9;

export class TransformerPolicy implements PolicyModel {
  readonly kind = 'transformer' as const;
  readonly config: TransformerConfig;
  readonly params: ParamSpec[] = [];

  constructor(config: Partial<TransformerConfig> = {}) {
    const c = { ...TRANSFORMER_DEFAULTS, ...config };
    if (config.dFF === undefined) c.dFF = 4 * c.dModel;
    if (c.dModel % c.nHeads !== 0) throw new RangeError(`transformer: dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}`);
    this.config = c;
    const { vocabSize: V, dModel: d, dFF: f, context: T, nLayers: L } = c;
    const std = 0.02;
    const resid = 0.02 / Math.sqrt(2 * L); // GPT-2: residual projections scaled by depth
    const w = (name: string, shape: number[], s = std) => this.params.push({ name, shape, init: { kind: 'normal', std: s }, decay: true });
    const zeros = (name: string, n: number) => this.params.push({ name, shape: [n], init: { kind: 'zeros' }, decay: false });
    const ones = (name: string, n: number) => this.params.push({ name, shape: [n], init: { kind: 'ones' }, decay: false });
    w('tok_emb', [V, d]);
    w('pos_emb', [T, d]);
    for (let l = 0; l < L; l++) {
      ones(`h${l}.ln1.g`, d);
      zeros(`h${l}.ln1.b`, d);
      for (const p of ['q', 'k', 'v']) {
        w(`h${l}.attn.w${p}`, [d, d]);
        zeros(`h${l}.attn.b${p}`, d);
      }
      w(`h${l}.attn.wo`, [d, d], resid);
      zeros(`h${l}.attn.bo`, d);
      ones(`h${l}.ln2.g`, d);
      zeros(`h${l}.ln2.b`, d);
      w(`h${l}.mlp.w1`, [d, f]);
      zeros(`h${l}.mlp.b1`, f);
      w(`h${l}.mlp.w2`, [f, d], resid);
      zeros(`h${l}.mlp.b2`, d);
    }
    ones('ln_f.g', d);
    zeros('ln_f.b', d);
    w('head.w', [d, V]);
    zeros('head.b', V);
    if (c.valueHead) {
      w('v.w', [d, 1]);
      zeros('v.b', 1);
    }
  }

  get numActions(): number {
    return this.config.vocabSize;
  }
  get hasValueHead(): boolean {
    return this.config.valueHead;
  }

  leadShape(batch: number, seqLen?: number): number[] {
    return [batch, this.seqLen(seqLen)];
  }

  /**
   * `tokens` int32 [B, T] with T = seqLen (default Tmax): logits at position t score the token at
   * t + 1. Causal attention makes position t's outputs independent of positions after it, so a
   * graph over T < Tmax computes the same values as the full one on positions 0..T−1.
   */
  declareObservations(g: Graph, batch: number, seqLen?: number): Record<string, Tensor> {
    return { tokens: g.input('tokens', [batch, this.seqLen(seqLen)], 'int32') };
  }

  private seqLen(seqLen: number | undefined): number {
    const T = seqLen ?? this.config.context;
    if (!Number.isInteger(T) || T < 1 || T > this.config.context) throw new RangeError(`transformer: seqLen must be a whole number in 1..${this.config.context}, got ${T}`);
    return T;
  }

  private splitHeads(g: Graph, x: Tensor): Tensor {
    const [B, S] = x.shape;
    const H = this.config.nHeads;
    return g.transpose(g.reshape(x, [B, S, H, this.config.dModel / H]), [0, 2, 1, 3]); // [B,H,S,dh]
  }

  /**
   * One pre-LN block. `attend(q, k, v)` gets per-head q/k/v [B,H,S,dh] and returns the
   * attention output [B,H,S,dh]; it is where full and cached decoding differ.
   */
  private block(g: Graph, P: Readonly<Record<string, Tensor>>, l: number, x: Tensor, attend: (q: Tensor, k: Tensor, v: Tensor) => Tensor): Tensor {
    const [B, S, d] = x.shape;
    const eps = this.config.lnEps;
    const h = layerNorm(g, x, P[`h${l}.ln1.g`], P[`h${l}.ln1.b`], eps);
    const q = this.splitHeads(g, linear(g, h, P[`h${l}.attn.wq`], P[`h${l}.attn.bq`]));
    const k = this.splitHeads(g, linear(g, h, P[`h${l}.attn.wk`], P[`h${l}.attn.bk`]));
    const v = this.splitHeads(g, linear(g, h, P[`h${l}.attn.wv`], P[`h${l}.attn.bv`]));
    const a = g.reshape(g.transpose(attend(q, k, v), [0, 2, 1, 3]), [B, S, d]);
    x = g.add(x, linear(g, a, P[`h${l}.attn.wo`], P[`h${l}.attn.bo`]));
    const h2 = layerNorm(g, x, P[`h${l}.ln2.g`], P[`h${l}.ln2.b`], eps);
    return g.add(x, linear(g, gelu(g, linear(g, h2, P[`h${l}.mlp.w1`], P[`h${l}.mlp.b1`])), P[`h${l}.mlp.w2`], P[`h${l}.mlp.b2`]));
  }

  private heads(g: Graph, P: Readonly<Record<string, Tensor>>, x: Tensor): ModelOutputs {
    const [B, S] = x.shape;
    const hf = layerNorm(g, x, P['ln_f.g'], P['ln_f.b'], this.config.lnEps);
    const logits = linear(g, hf, P['head.w'], P['head.b']);
    if (!this.config.valueHead) return { logits };
    return { logits, value: g.reshape(linear(g, hf, P['v.w'], P['v.b']), [B, S]) };
  }

  private attention(g: Graph, q: Tensor, kT: Tensor, v: Tensor, mask: Tensor): Tensor {
    const dh = this.config.dModel / this.config.nHeads;
    const scores = g.add(g.mul(g.matmul(q, kT), 1 / Math.sqrt(dh)), mask);
    return g.matmul(g.softmax(scores, -1), v);
  }

  forward(g: Graph, P: Readonly<Record<string, Tensor>>, obs: Readonly<Record<string, Tensor>>): ModelOutputs {
    const tokens = obs.tokens;
    const T = tokens.shape[1];
    if (T > this.config.context) throw new RangeError(`transformer: ${T} tokens exceed context ${this.config.context}`);
    let x = g.add(g.gather(P.tok_emb, tokens), g.slice(P.pos_emb, 0, 0, T));
    const causal = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causal[i * T + j] = MASKED;
    const mask = g.constant(causal, [T, T]);
    for (let l = 0; l < this.config.nLayers; l++) {
      x = this.block(g, P, l, x, (q, k, v) => this.attention(g, q, g.transpose(k, [0, 1, 3, 2]), v, mask));
    }
    return this.heads(g, P, x);
  }

  /**
   * The same network over groups of sequences that share their first tokens (a GRPO group starts
   * from one prompt): each group's prefix runs once, and its sequences run only their own
   * suffixes, attending to the prefix's keys/values and causally to themselves. Equal logits to
   * `forward` on the suffix positions, for about (N·T) / (c + N·(T − c)) less work per group of
   * N sequences with a c-token prefix. B sequences in G = `groups` groups of N = B / G
   * (sequences gN … gN + N − 1 form group g); P = `prefixLen`, S = the suffix length (seqLen):
   *   `prefix` int32 [G, P]: each group's shared tokens (c_g ≤ P of them, then padding);
   *   `prefix_bias` float [G, P]: 0 on those c_g tokens, MASKED (−1e9) on the padding;
   *   `tokens` int32 [B, S]: each sequence's own tokens, positions c_g … c_g + S − 1;
   *   `positions` int32 [B, S]: those positions (any valid position on padding).
   * Outputs logits (and values) for the suffix positions only, [B, S, ·]; so a caller keeps
   * every position it needs a log-prob at (≥ the first loss position − 1) in the suffix.
   */
  withSharedPrefix(groups: number, prefixLen: number): PolicyModel {
    const T = this.config.context;
    if (!Number.isInteger(groups) || groups < 1) throw new RangeError(`withSharedPrefix: groups must be a whole number ≥ 1, got ${groups}`);
    if (!Number.isInteger(prefixLen) || prefixLen < 1 || prefixLen >= T) throw new RangeError(`withSharedPrefix: prefixLen must be a whole number in 1..${T - 1}, got ${prefixLen}`);
    const rows = (batch: number) => {
      if (batch % groups !== 0) throw new RangeError(`withSharedPrefix: batch ${batch} is not a multiple of ${groups} groups`);
      return batch;
    };
    return {
      kind: 'transformer',
      params: this.params,
      numActions: this.numActions,
      hasValueHead: this.hasValueHead,
      leadShape: (batch, seqLen) => [rows(batch), this.seqLen(seqLen)],
      declareObservations: (g, batch, seqLen) => {
        const S = this.seqLen(seqLen);
        return {
          prefix: g.input('prefix', [groups, prefixLen], 'int32'),
          prefix_bias: g.input('prefix_bias', [groups, prefixLen]),
          tokens: g.input('tokens', [rows(batch), S], 'int32'),
          positions: g.input('positions', [rows(batch), S], 'int32'),
        };
      },
      forward: (g, P, obs) => this.forwardShared(g, P, obs),
    };
  }

  private forwardShared(g: Graph, P: Readonly<Record<string, Tensor>>, obs: Readonly<Record<string, Tensor>>): ModelOutputs {
    const { prefix, prefix_bias: bias, tokens, positions } = obs;
    const [G, Pn] = prefix.shape;
    const [B, S] = tokens.shape;
    const N = B / G;
    const { nHeads: H, dModel: d, nLayers: L } = this.config;
    const dh = d / H;
    const scale = 1 / Math.sqrt(dh);
    const causal = (n: number) => {
      const m = new Float32Array(n * n);
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) m[i * n + j] = MASKED;
      return g.constant(m, [n, n]);
    };
    const prefixMask = causal(Pn);
    const ownMask = causal(S);
    // Group g's prefix keys/values, bias, repeated for its N sequences: [G,…] → [G·N,…].
    const perSequence = (x: Tensor) => g.reshape(g.expand(g.reshape(x, [G, 1, ...x.shape.slice(1)]), [G, N, ...x.shape.slice(1)]), [B, ...x.shape.slice(1)]);
    const padBias = perSequence(g.reshape(bias, [G, 1, 1, Pn])); // [B,1,1,P]
    let xp = g.add(g.gather(P.tok_emb, prefix), g.slice(P.pos_emb, 0, 0, Pn)); // [G,P,d]
    let xs = g.add(g.gather(P.tok_emb, tokens), g.gather(P.pos_emb, positions)); // [B,S,d]
    for (let l = 0; l < L; l++) {
      let kv: { k: Tensor; v: Tensor };
      if (l < L - 1) {
        xp = this.block(g, P, l, xp, (q, k, v) => {
          kv = { k, v };
          return this.attention(g, q, g.transpose(k, [0, 1, 3, 2]), v, prefixMask);
        });
      } else {
        // The last layer's prefix outputs feed nothing: only its keys/values are needed.
        const h = layerNorm(g, xp, P[`h${l}.ln1.g`], P[`h${l}.ln1.b`], this.config.lnEps);
        kv = { k: this.splitHeads(g, linear(g, h, P[`h${l}.attn.wk`], P[`h${l}.attn.bk`])), v: this.splitHeads(g, linear(g, h, P[`h${l}.attn.wv`], P[`h${l}.attn.bv`])) };
      }
      const kP = perSequence(kv!.k); // [B,H,P,dh]
      const vP = perSequence(kv!.v);
      xs = this.block(g, P, l, xs, (q, k, v) => {
        const sPre = g.add(g.mul(g.matmul(q, g.transpose(kP, [0, 1, 3, 2])), scale), padBias); // [B,H,S,P]
        const sOwn = g.add(g.mul(g.matmul(q, g.transpose(k, [0, 1, 3, 2])), scale), ownMask); // [B,H,S,S]
        const p = g.softmax(g.concat([sPre, sOwn], 3), -1);
        return g.add(g.matmul(g.slice(p, 3, 0, Pn), vP), g.matmul(g.slice(p, 3, Pn, Pn + S), v));
      });
    }
    return this.heads(g, P, xs);
  }

  /**
   * Incremental decoding graph for `batch` rows and `step` new tokens per call.
   * Inputs: params; `tokens` int32 [B, S]; `pos` int32 [B] (position of the first new token);
   * `past.k.{l}`, `past.v.{l}` float [B, H, Tmax, dh]. Outputs: `logprobs` [B, S, V], `value`
   * [B, S] (value head only), `present.k.{l}`, `present.v.{l}` (feed back as next past).
   * Rows need pos + S ≤ Tmax.
   *
   * `cache: 'delta'` (for caches kept in CPU memory): the graph returns only this call's keys
   * and values, `new.k.{l}` [B, H, dh, S] and `new.v.{l}` [B, H, S, dh], for the caller to write
   * at positions pos..pos+S−1, instead of a whole new cache; and `past.k.{l}` is stored
   * transposed, [B, H, dh, Tmax], so q·Kᵀ needs no copy. Slots at or after pos are never read
   * (the new keys are attended to from this call's own k, v). On WASM this saves writing,
   * transposing and copying out the whole cache on every call; for GPU-resident caches keep
   * 'full'.
   */
  buildDecodeGraph(batch: number, step = 1, cache: 'full' | 'delta' = 'full'): Graph {
    const g = new Graph(cache === 'delta' ? 'transformer_decode_delta' : 'transformer_decode');
    const P = declareParams(g, this);
    const { nHeads: H, dModel: d, context: Tmax, nLayers: L } = this.config;
    const dh = d / H;
    const B = batch;
    const S = step;
    const tokens = g.input('tokens', [B, S], 'int32');
    const pos = g.input('pos', [B], 'int32');
    const past = Array.from({ length: L }, (_, l) => ({
      k: g.input(`past.k.${l}`, cache === 'delta' ? [B, H, dh, Tmax] : [B, H, Tmax, dh]),
      v: g.input(`past.v.${l}`, [B, H, Tmax, dh]),
    }));
    // positions [B, S] = pos[:, None] + [0..S)
    const positions = g.node('Add', [g.reshape(pos, [B, 1]), g.constant(Array.from({ length: S }, (_, i) => i), [S], 'int32')], {}, [B, S], 'int32');
    let x = g.add(g.gather(P.tok_emb, tokens), g.gather(P.pos_emb, positions));
    const attend = cache === 'delta' ? this.deltaAttention(g, pos, B, S) : this.fullCacheAttention(g, positions, B, S);
    for (let l = 0; l < L; l++) x = this.block(g, P, l, x, (q, k, v) => attend(l, past[l], q, k, v));
    const out = this.heads(g, P, x);
    g.output(logSoftmax(g, out.logits), 'logprobs');
    if (out.value) g.output(out.value, 'value');
    return g;
  }

  /** 'full' cache: write this call's k/v into the whole cache (`present.*`) and attend over it. */
  private fullCacheAttention(g: Graph, positions: Tensor, B: number, S: number): (l: number, past: { k: Tensor; v: Tensor }, q: Tensor, k: Tensor, v: Tensor) => Tensor {
    const { nHeads: H, context: Tmax } = this.config;
    // Write one-hot W [B, S, Tmax]; slots written this call get replaced, others kept.
    const W = g.oneHot(positions, Tmax);
    const keep = g.reshape(g.sub(1, g.reduceSum(W, [1])), [B, 1, Tmax, 1]);
    const scatter = g.expand(g.reshape(g.transpose(W, [0, 2, 1]), [B, 1, Tmax, S]), [B, H, Tmax, S]);
    // Key j is visible to the query at position p iff j ≤ p.
    const iota = g.constant(Array.from({ length: Tmax }, (_, i) => i), [Tmax], 'int32');
    const future = g.less(g.reshape(positions, [B, S, 1]), iota); // [B,S,Tmax]: p < j
    const mask = g.reshape(g.where(future, MASKED, 0), [B, 1, S, Tmax]);
    return (l, past, q, k, v) => {
      const kc = g.add(g.mul(past.k, keep), g.matmul(scatter, k));
      const vc = g.add(g.mul(past.v, keep), g.matmul(scatter, v));
      g.output(kc, `present.k.${l}`);
      g.output(vc, `present.v.${l}`);
      return this.attention(g, q, g.transpose(kc, [0, 1, 3, 2]), vc, mask);
    };
  }

  /** 'delta' cache: attend over the cached slots before pos and this call's own k/v; output only those (`new.*`). */
  private deltaAttention(g: Graph, pos: Tensor, B: number, S: number): (l: number, past: { k: Tensor; v: Tensor }, q: Tensor, k: Tensor, v: Tensor) => Tensor {
    const { nHeads: H, dModel: d, context: Tmax } = this.config;
    // Cached slot j is visible iff j < pos (slots from pos on are this call's or stale).
    const jPlus1 = g.constant(Array.from({ length: Tmax }, (_, j) => j + 1), [Tmax], 'int32');
    const pastMask = g.reshape(g.where(g.less(g.reshape(pos, [B, 1]), jPlus1), MASKED, 0), [B, 1, 1, Tmax]); // j ≥ pos
    // Within the call: query s sees new keys 0..s.
    const causal = new Float32Array(S * S);
    for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) causal[i * S + j] = MASKED;
    const newMask = g.constant(causal, [S, S]);
    const scale = 1 / Math.sqrt(d / H);
    return (l, past, q, k, v) => {
      const kT = g.transpose(k, [0, 1, 3, 2]); // [B,H,dh,S]
      g.output(kT, `new.k.${l}`);
      g.output(v, `new.v.${l}`);
      const sPast = g.add(g.mul(g.matmul(q, past.k), scale), pastMask); // [B,H,S,Tmax]
      const sNew = g.add(g.mul(g.matmul(q, kT), scale), newMask); // [B,H,S,S]
      const p = g.softmax(g.concat([sPast, sNew], 3), -1);
      return g.add(g.matmul(g.slice(p, 3, 0, Tmax), past.v), g.matmul(g.slice(p, 3, Tmax, Tmax + S), v));
    };
  }

  /** Zero-filled cache for `batch` rows: one [B, H, Tmax, dh] array per past.k/past.v input. */
  emptyCache(batch: number): Record<string, Float32Array> {
    const { nHeads: H, dModel: d, context: Tmax } = this.config;
    const n = batch * H * Tmax * (d / H);
    const out: Record<string, Float32Array> = {};
    for (let l = 0; l < this.config.nLayers; l++) {
      out[`past.k.${l}`] = new Float32Array(n);
      out[`past.v.${l}`] = new Float32Array(n);
    }
    return out;
  }

  /** Shape of each cache tensor. */
  cacheShape(batch: number): number[] {
    const { nHeads: H, dModel: d, context: Tmax } = this.config;
    return [batch, H, Tmax, d / H];
  }
}

// ---------------------------------------------------------------------------------------------
// The run configuration's token model
// ---------------------------------------------------------------------------------------------

/** The transformer sizes a run configures (`model` of a token run); the vocabulary is the shared codec's. */
export interface TransformerModelConfig {
  kind: 'transformer';
  /** Residual width. */
  dModel: number;
  /** Decoder blocks. */
  nLayers: number;
  /** Attention heads (divide dModel). */
  nHeads: number;
  /** MLP hidden width. */
  dFF: number;
  /** Context length in tokens: an episode's whole transcript must fit (longer ones are truncated). */
  context: number;
}

export const DEFAULT_TOKEN_MODEL: TransformerModelConfig = { kind: 'transformer', dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, context: 128 };

/** The transformer for a config (vocabulary = the shared codec); PPO needs the value head. */
export function makeTokenModel(m: TransformerModelConfig, valueHead = false): TransformerPolicy {
  return new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, dFF: m.dFF, context: m.context, valueHead });
}
