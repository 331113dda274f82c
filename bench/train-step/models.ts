/**
 * The exact functions the train-step benchmark times, described once so that every
 * implementation (our ONNX graph on two runtimes, tfjs, jax-js, and the float64 reference used
 * by the peer test) computes the same thing on the same weights and the same batch.
 *
 * One step = forward, PPO clipped policy-gradient loss (plus a value loss for the MLP's value
 * head), backward, and a bias-corrected Adam update of every parameter.
 */
import { Rng } from '../../src/core/util/rng.ts';
import { VOCAB_SIZE } from '../../src/core/text/codec.ts';

/** Actor-critic MLP over a flat observation: tanh hidden layers, policy logits, scalar value. */
export interface MlpConfig {
  kind: 'mlp';
  /** Observation width (features per row). */
  obsDim: number;
  /** Hidden layer widths, in order; every hidden layer is Linear + tanh. */
  hidden: number[];
  /** Number of discrete actions (policy logits per row). */
  numActions: number;
  /** Rows per train step. */
  batch: number;
}

/** Decoder-only transformer: pre-LN, learned positions, causal self-attention, GELU (erf). */
export interface TransformerConfig {
  kind: 'transformer';
  /** Token vocabulary (embedding rows and LM-head columns). */
  vocab: number;
  /** Residual stream width. */
  dModel: number;
  /** Number of transformer blocks. */
  layers: number;
  /** Attention heads per block (dModel must divide evenly). */
  heads: number;
  /** Hidden width of the feed-forward sub-layer. */
  ffn: number;
  /** Sequence length (tokens per sequence; also the number of learned positions). */
  context: number;
  /** Sequences per train step. */
  batch: number;
}

export type ModelConfig = MlpConfig | TransformerConfig;

/** Loss and optimizer settings shared by every implementation. */
export interface StepHyper {
  /** PPO ratio clip: the surrogate uses clip(ratio, 1 - clip, 1 + clip). */
  clip: number;
  /** Weight of the value loss (MLP only): loss = pg + valueCoef * 0.5 * mean((v - ret)^2). */
  valueCoef: number;
  /** Adam learning rate. */
  lr: number;
  /** Adam first-moment decay. */
  beta1: number;
  /** Adam second-moment decay. */
  beta2: number;
  /** Adam epsilon, added to sqrt(v_hat) (PyTorch / tfjs convention). */
  eps: number;
  /** LayerNorm variance epsilon (transformer only). */
  lnEps: number;
}

export const HYPER: StepHyper = {
  clip: 0.2,
  valueCoef: 0.5,
  lr: 1e-3,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  lnEps: 1e-5,
};

/** The named models of the benchmark (the sizes the design measured) plus tiny versions for the peer test. */
export const MODELS = {
  'mlp-76k': { kind: 'mlp', obsDim: 160, hidden: [256, 128], numActions: 7, batch: 64 },
  'transformer-1m': {
    kind: 'transformer',
    vocab: VOCAB_SIZE,
    dModel: 128,
    layers: 5,
    heads: 4,
    ffn: 512,
    context: 32,
    batch: 64,
  },
  'mlp-tiny': { kind: 'mlp', obsDim: 6, hidden: [8, 5], numActions: 4, batch: 5 },
  'transformer-tiny': {
    kind: 'transformer',
    vocab: 11,
    dModel: 8,
    layers: 2,
    heads: 2,
    ffn: 12,
    context: 5,
    batch: 3,
  },
} satisfies Record<string, ModelConfig>;

export type ModelName = keyof typeof MODELS;

/** One parameter tensor: name, shape (row-major) and how it is initialised. */
export interface ParamSpec {
  name: string;
  shape: number[];
  /** 'normal' draws N(0, std^2); 'zeros' / 'ones' are constants (biases, LayerNorm). */
  init: 'normal' | 'zeros' | 'ones';
  std: number;
}

const size = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/**
 * Every parameter of the model, in a fixed order that all implementations share. Names,
 * shapes and order are those of the engine's models (src/core/models: MlpPolicy,
 * TransformerPolicy), so weights transfer by name. Linear weights are [in, out]: y = x @ W + b.
 */
export function paramSpecs(cfg: ModelConfig): ParamSpec[] {
  const normal = (name: string, shape: number[], std: number): ParamSpec => ({ name, shape, init: 'normal', std });
  const zeros = (name: string, shape: number[]): ParamSpec => ({ name, shape, init: 'zeros', std: 0 });
  const ones = (name: string, shape: number[]): ParamSpec => ({ name, shape, init: 'ones', std: 0 });
  // Biases get small random values rather than zeros so that the peer test exercises their
  // gradients and their effect on the forward pass.
  const bias = (name: string, n: number): ParamSpec => normal(name, [n], 0.02);
  if (cfg.kind === 'mlp') {
    const out: ParamSpec[] = [];
    let fanIn = cfg.obsDim;
    cfg.hidden.forEach((h, i) => {
      out.push(normal(`l${i}.w`, [fanIn, h], 1 / Math.sqrt(fanIn)), bias(`l${i}.b`, h));
      fanIn = h;
    });
    // Small policy head so the initial policy is near uniform (as in CleanRL's 0.01 init).
    out.push(normal('pi.w', [fanIn, cfg.numActions], 0.01 / Math.sqrt(fanIn)), bias('pi.b', cfg.numActions));
    out.push(normal('v.w', [fanIn, 1], 1 / Math.sqrt(fanIn)), bias('v.b', 1));
    return out;
  }
  const { vocab: V, dModel: d, ffn: f, context: T } = cfg;
  const out: ParamSpec[] = [normal('tok_emb', [V, d], 0.02), normal('pos_emb', [T, d], 0.02)];
  for (let l = 0; l < cfg.layers; l++) {
    out.push(
      ones(`h${l}.ln1.g`, [d]),
      zeros(`h${l}.ln1.b`, [d]),
      // q, k, v projections; head h owns columns [h*dh, (h+1)*dh) of each.
      normal(`h${l}.attn.wq`, [d, d], 0.02),
      bias(`h${l}.attn.bq`, d),
      normal(`h${l}.attn.wk`, [d, d], 0.02),
      bias(`h${l}.attn.bk`, d),
      normal(`h${l}.attn.wv`, [d, d], 0.02),
      bias(`h${l}.attn.bv`, d),
      normal(`h${l}.attn.wo`, [d, d], 0.02),
      bias(`h${l}.attn.bo`, d),
      ones(`h${l}.ln2.g`, [d]),
      zeros(`h${l}.ln2.b`, [d]),
      normal(`h${l}.mlp.w1`, [d, f], 0.02),
      bias(`h${l}.mlp.b1`, f),
      normal(`h${l}.mlp.w2`, [f, d], 0.02),
      bias(`h${l}.mlp.b2`, d),
    );
  }
  out.push(ones('ln_f.g', [d]), zeros('ln_f.b', [d]), normal('head.w', [d, V], 0.02), bias('head.b', V));
  return out;
}

export function paramCount(cfg: ModelConfig): number {
  return paramSpecs(cfg).reduce((n, p) => n + size(p.shape), 0);
}

/** Parameter values by name, float32 row-major, in `paramSpecs` order. */
export type Params = Map<string, Float32Array>;

export function initParams(cfg: ModelConfig, seed: number): Params {
  const rng = new Rng(seed);
  const out: Params = new Map();
  for (const p of paramSpecs(cfg)) {
    const a = new Float32Array(size(p.shape));
    if (p.init === 'ones') a.fill(1);
    else if (p.init === 'normal') for (let i = 0; i < a.length; i++) a[i] = rng.normal() * p.std;
    out.set(p.name, a);
  }
  return out;
}

/** One MLP training batch (B rows). */
export interface MlpBatch {
  kind: 'mlp';
  /** [B, obsDim] observations. */
  obs: Float32Array;
  /** [B] sampled actions in [0, numActions). */
  actions: Int32Array;
  /** [B] advantages. */
  advantages: Float32Array;
  /** [B] behaviour-policy log-probabilities of `actions`. */
  oldLogp: Float32Array;
  /** [B] value targets. */
  returns: Float32Array;
}

/** One token batch (B sequences x T tokens); every position is a scored action. */
export interface TokenBatch {
  kind: 'transformer';
  /** [B, T] input token ids in [0, vocab). */
  tokens: Int32Array;
  /** [B, T] the token sampled at each position (the action scored there). */
  actions: Int32Array;
  /** [B, T] per-token advantages. */
  advantages: Float32Array;
  /** [B, T] behaviour-policy log-probabilities of `actions`. */
  oldLogp: Float32Array;
}

export type Batch = MlpBatch | TokenBatch;

/**
 * Fixed random batch. Old log-probs sit near the near-uniform initial policy's
 * (-log K, jittered by 0.15) so ratios straddle the clip range: both branches of the clipped
 * surrogate are live, as in real PPO updates.
 */
export function makeBatch(cfg: ModelConfig, seed: number): Batch {
  const rng = new Rng(seed);
  const normals = (n: number, scale = 1, offset = 0): Float32Array => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = offset + scale * rng.normal();
    return a;
  };
  const ints = (n: number, hi: number): Int32Array => {
    const a = new Int32Array(n);
    for (let i = 0; i < n; i++) a[i] = rng.int(0, hi);
    return a;
  };
  if (cfg.kind === 'mlp') {
    const B = cfg.batch;
    return {
      kind: 'mlp',
      obs: normals(B * cfg.obsDim),
      actions: ints(B, cfg.numActions),
      advantages: normals(B),
      oldLogp: normals(B, 0.15, -Math.log(cfg.numActions)),
      returns: normals(B),
    };
  }
  const n = cfg.batch * cfg.context;
  return {
    kind: 'transformer',
    tokens: ints(n, cfg.vocab),
    actions: ints(n, cfg.vocab),
    advantages: normals(n),
    oldLogp: normals(n, 0.15, -Math.log(cfg.vocab)),
  };
}

/**
 * One implementation of the train step, holding its own weights and Adam state.
 * `step()` runs one full step and returns the loss computed in that step (before the update),
 * read back to the host, so no framework can defer the work past the timer.
 */
export interface TrainStep {
  step(): Promise<number>;
  /** Current parameters, copied to the host (for tests; not timed). */
  params(): Promise<Params>;
  dispose(): void;
  /** Settings that matter for a fair comparison (threads, backend, ...). */
  meta: Record<string, string | number | boolean>;
}
