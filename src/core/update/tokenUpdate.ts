/**
 * The parts of a token-policy update that do not depend on how episodes were collected: scoring
 * sequences with a policy runner (reference or proximal log-probs) and the epochs × minibatches
 * loop of the ONNX train step over whole sequences.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { logprobMismatch } from '../algos/offpolicy.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import { PAD } from '../text/codec.ts';
import type { Rng } from '../util/rng.ts';
import type { Engine, Feed, Learner, PolicyRunner } from '../engine/types.ts';

/**
 * Sequence lengths a token learner or scorer runs at: multiples of `step` up to the context.
 * Episodes of a multi-turn text env are often much shorter than the context (flaky-api: ~130–200
 * of 256 positions), and every op of the train step is linear or worse in the positions it
 * runs over, so a minibatch of short sequences runs at the shortest length that holds them.
 */
export function lengthBuckets(context: number, step = 32): number[] {
  const out: number[] = [];
  for (let T = step; T < context; T += step) out.push(T);
  out.push(context);
  return out;
}

/** Positions of each of n sequences [n·T] that matter: up to its last masked position (≥ 1). */
export function neededLengths(mask: ArrayLike<number>, n: number, T: number): Int32Array {
  const out = new Int32Array(n).fill(1);
  for (let s = 0; s < n; s++) {
    for (let t = T - 1; t >= 0; t--) {
      if (mask[s * T + t]) {
        out[s] = t + 1;
        break;
      }
    }
  }
  return out;
}

/** The shortest of `lens` (ascending) that is ≥ need, else `full`. */
export function bucketFor(lens: readonly number[] | undefined, need: number, full: number): number {
  for (const T of lens ?? []) if (T >= need) return T;
  return full;
}

/**
 * log π(actions[t] | tokens[≤t]) under `runner` for n sequences padded to T: tokens/actions
 * int32 [n·T] → float32 [n·T]. `rows` (sequence indices) limits the work to those sequences;
 * the others stay 0. The runner's batch B sets the chunk size; V is the vocabulary.
 */
export async function sequenceLogprobs(
  runner: PolicyRunner,
  tokens: Int32Array,
  actions: Int32Array,
  n: number,
  T: number,
  V: number,
  rows?: readonly number[],
): Promise<Float32Array> {
  const idx = rows ?? Array.from({ length: n }, (_, i) => i);
  const B = runner.batch;
  const out = new Float32Array(n * T);
  const buf = new Int32Array(B * T);
  for (let o = 0; o < idx.length; o += B) {
    const chunk = idx.slice(o, o + B);
    buf.fill(PAD);
    chunk.forEach((s, j) => buf.set(tokens.subarray(s * T, (s + 1) * T), j * T));
    const r = await runner.run({ tokens: buf });
    chunk.forEach((s, j) => {
      for (let t = 0; t < T; t++) out[s * T + t] = r.logprobs[(j * T + t) * V + actions[s * T + t]];
    });
  }
  return out;
}

/** The first L positions of each of n rows of T: [n·T] → [n·L]. */
export function truncateRows<A extends Int32Array | Float32Array>(a: A, n: number, T: number, L: number): A {
  if (L === T) return a;
  const out = new (a.constructor as new (len: number) => A)(n * L);
  for (let s = 0; s < n; s++) out.set(a.subarray(s * T, s * T + L), s * L);
  return out;
}

/**
 * Scores sequences with one policy runner per length bucket (created on first use): the
 * reference or proximal log-probs of a token update without the full context's padding.
 * Positions past a sequence's last masked one are not scored (they stay 0).
 */
export class SequenceScorer {
  /** By `${T}`, or `${S}/${P}` for shared-prefix runners. */
  private readonly runners = new Map<string, Promise<PolicyRunner>>();
  private weights: Weights;
  private version: number;

  constructor(
    private readonly engine: Engine,
    private readonly model: PolicyModel,
    /** Sequences per runner call. */
    readonly batch: number,
    weights: Weights,
    /** Ascending lengths; the last is the model's context. */
    readonly seqLens: readonly number[],
    version = 0,
  ) {
    this.weights = weights;
    this.version = version;
  }

  private runner(T: number, prefix?: { groups: number; length: number }): Promise<PolicyRunner> {
    const key = prefix ? `${T}/${prefix.length}` : String(T);
    let r = this.runners.get(key);
    if (!r) {
      const model = prefix ? this.model.withSharedPrefix!(prefix.groups, prefix.length) : this.model;
      r = this.engine.createPolicy(model, this.batch, this.weights, T).then((p) => {
        p.setWeights(this.weights, this.version);
        return p;
      });
      this.runners.set(key, r);
    }
    return r;
  }

  /** New weights for every runner (those built later start from them too). */
  async setWeights(weights: Weights, version: number): Promise<void> {
    this.weights = weights;
    this.version = version;
    for (const r of this.runners.values()) (await r).setWeights(weights, version);
  }

  /**
   * log π(actions[t] | tokens[≤t]) on the positions `mask` marks (and those before them), n
   * sequences padded to T: [n·T], 0 elsewhere. `rows` limits the work to those sequences.
   */
  async logprobs(
    b: { tokens: Int32Array; actions: Int32Array; mask: ArrayLike<number>; n: number; T: number; V: number; groupSize?: number },
    rows?: readonly number[],
  ): Promise<Float32Array> {
    const { n, T, V } = b;
    const need = neededLengths(b.mask, n, T);
    const N = b.groupSize ?? 0;
    if (!rows && N > 0 && n % N === 0 && this.batch % N === 0 && this.seqLens.length > 1 && this.model.withSharedPrefix) return this.sharedLogprobs(b, need);
    // Shortest first, cut into calls of B: as few calls as without buckets, each at the
    // length its longest sequence needs.
    const order = [...(rows ?? Array.from({ length: n }, (_, i) => i))].sort((x, y) => need[x] - need[y]);
    const out = new Float32Array(n * T);
    const B = this.batch;
    for (let o = 0; o < order.length; o += B) {
      const chunk = order.slice(o, o + B);
      const L = bucketFor(this.seqLens, need[chunk[chunk.length - 1]], T);
      const runner = await this.runner(L);
      const buf = new Int32Array(B * L).fill(PAD);
      chunk.forEach((s, j) => buf.set(b.tokens.subarray(s * T, s * T + L), j * L));
      const r = await runner.run({ tokens: buf });
      chunk.forEach((s, j) => {
        for (let t = 0; t < L; t++) out[s * T + t] = r.logprobs[(j * L + t) * V + b.actions[s * T + t]];
      });
    }
    return out;
  }

  /** logprobs() over whole groups of `b.groupSize` sequences, each group's shared prefix run once. */
  private async sharedLogprobs(b: { tokens: Int32Array; actions: Int32Array; mask: ArrayLike<number>; n: number; T: number; V: number; groupSize?: number }, need: Int32Array): Promise<Float32Array> {
    const { n, T, V } = b;
    const N = b.groupSize!;
    const B = this.batch;
    const G = B / N;
    const off = sharedPrefixes(b, N, this.seqLens[this.seqLens.length - 2]);
    const suffix = Int32Array.from({ length: n / N }, (_, g) => Math.max(...Array.from({ length: N }, (_, k) => need[g * N + k] - off[g])));
    const order = Array.from({ length: n / N }, (_, g) => g).sort((x, y) => suffix[x] - suffix[y]);
    const out = new Float32Array(n * T);
    for (let o = 0; o < order.length; o += G) {
      const chunk = order.slice(o, o + G);
      const S = bucketFor(this.seqLens, suffix[chunk[chunk.length - 1]], T);
      const P = bucketFor(this.seqLens, Math.max(1, ...chunk.map((g) => off[g])), T);
      const runner = await this.runner(S, { groups: G, length: P });
      const tokens = new Int32Array(B * S).fill(PAD);
      const positions = new Int32Array(B * S);
      const prefix = new Int32Array(G * P).fill(PAD);
      const bias = new Float32Array(G * P).fill(MASKED_BIAS);
      chunk.forEach((g, i) => {
        writePrefix(prefix, bias, i, P, b.tokens, g * N, T, off[g]);
        for (let k = 0; k < N; k++) {
          const s = g * N + k, j = i * N + k;
          tokens.set(b.tokens.subarray(s * T + off[g], s * T + Math.min(T, off[g] + S)), j * S);
          writePositions(positions, j, S, off[g], T);
        }
      });
      const r = await runner.run({ tokens, positions, prefix, prefix_bias: bias });
      chunk.forEach((g, i) => {
        for (let k = 0; k < N; k++) {
          const s = g * N + k, j = i * N + k;
          for (let t = 0; t < Math.min(S, T - off[g]); t++) out[s * T + off[g] + t] = r.logprobs[(j * S + t) * V + b.actions[s * T + off[g] + t]];
        }
      });
    }
    return out;
  }

  async release(): Promise<void> {
    await Promise.all([...this.runners.values()].map(async (r) => (await r).release()));
  }
}

/** Per-token rows of a batch of n sequences × T positions. */
export interface TokenUpdateBatch {
  n: number;
  T: number;
  tokens: Int32Array;
  actions: Int32Array;
  /** 1 on policy tokens (targets), 0 elsewhere. */
  mask: Float32Array;
  /** π_old the PPO ratio is taken against (behaviour μ, or the proximal policy for stale tokens). */
  oldLogprobs: Float32Array;
  /** Advantage per token (0 off the mask). */
  advantages: ArrayLike<number>;
  /** Aggregation weight per token (token / sequence / constant normalisation). */
  weights: ArrayLike<number>;
  /** Reference log-probs (KL as a loss), or null. */
  refLogprobs: Float32Array | null;
  /** Further per-token inputs of the train graph, [n·T] each (e.g. PPO's `returns`). */
  extra?: Readonly<Record<string, Float32Array>>;
  /**
   * Sequences gN … gN + N − 1 form group g and start from one prompt. With a learner made with
   * prefixGroups G (and batch G·N), each minibatch is G whole groups, and each group's shared
   * prefix runs once (the same update as without sharing, on fewer positions).
   */
  groupSize?: number;
}

export interface TokenUpdateResult {
  /** Learner metrics averaged over the optimizer steps. */
  metrics: Record<string, number>;
  steps: number;
  /** False when the NaN guard skipped at least one step. */
  allApplied: boolean;
  /** Rollout vs learner log-probs on the first minibatch, before any update (TITO check). */
  mismatch?: { absDiffMean: number; absDiffMax: number };
  /**
   * [n·T] the learner's log-probs in the first epoch, each at the weights of the step that
   * trained its sequence (before that step), on the positions that step ran over.
   */
  stepLogprobs: Float32Array;
}

/**
 * `algo.updateEpochs` × minibatches of whole sequences through the learner's static batch.
 * Each minibatch is one optimizer step of comparable scale: its weights are scaled by n / rows.
 * When the learner takes shorter sequence lengths (Learner.seqLens), each epoch's shuffled
 * order is grouped by length bucket before it is cut into minibatches (as group-by-length
 * sampling does), and each minibatch runs at the shortest length that holds its sequences'
 * masked positions: the same loss and gradient, on fewer padded positions.
 * `check` (default: oldLogprobs on the whole mask) is what the first minibatch's pre-update
 * learner log-probs are compared with: the rollout's log-probs on tokens sampled by the weights
 * being trained (stale tokens were sampled by other weights and would differ by design).
 */
export async function runTokenUpdate(
  learner: Learner,
  algo: AlgoConfig,
  b: TokenUpdateBatch,
  rng: Rng,
  check?: { logprobs: Float32Array; mask: Float32Array },
): Promise<TokenUpdateResult> {
  const { n, T } = b;
  const sums: Record<string, number> = {};
  let steps = 0;
  let allApplied = true;
  let mismatch: TokenUpdateResult['mismatch'];
  const stepLogprobs = new Float32Array(n * T);
  if (n === 0) return { metrics: {}, steps: 0, allApplied: true, stepLogprobs };
  const B = learner.batch;
  const chunks = Math.max(algo.minibatches, Math.ceil(n / B));
  const per = Math.ceil(n / chunks);
  const lens = learner.seqLens?.length ? learner.seqLens : undefined;
  const need = neededLengths(b.mask, n, T);
  // Shared prefixes: whole groups per minibatch, each group's common prefix run once. Each
  // sequence's positions before `offset` are its group's prefix; offset = 0 without sharing.
  const N = b.groupSize ?? 0;
  const G = learner.prefixGroups ?? 0;
  const prefix = lens && lens.length > 1 && G > 0 && N > 0 && G * N === B && n % B === 0 && chunks === n / B ? sharedPrefixes(b, N, lens[lens.length - 2] ?? 0) : null;
  const offset = prefix ? Int32Array.from({ length: n }, (_, s) => prefix[Math.floor(s / N)]) : new Int32Array(n);
  const bucket = Int32Array.from(need, (x, s) => bucketFor(lens, x - offset[s], T));
  const buffersFor = feedBuffers(B, G, Object.keys(b.extra ?? {}));
  const order = Array.from({ length: prefix ? n / N : n }, (_, i) => i); // groups or sequences
  const key = prefix ? Int32Array.from(order, (g) => Math.max(...bucket.subarray(g * N, (g + 1) * N))) : bucket;
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    rng.shuffle(order);
    if (lens) order.sort((x, y) => key[x] - key[y]); // stable: shuffled within a bucket
    for (let c = 0; c < chunks; c++) {
      const seqs = prefix
        ? order.slice(c * G, (c + 1) * G).flatMap((g) => Array.from({ length: N }, (_, k) => g * N + k))
        : order.slice(c * per, Math.min(n, (c + 1) * per));
      if (seqs.length === 0) continue;
      const L = Math.max(...seqs.map((s) => bucket[s]));
      const P = prefix ? bucketFor(lens, Math.max(1, ...seqs.map((s) => offset[s])), T) : 0;
      const { f, extra } = buffersFor(L, P);
      for (const a of Object.values(f)) a.fill(0);
      for (const a of Object.values(extra)) a.fill(0);
      fillMinibatch(f, extra, b, seqs, offset, { L, P, N, T, scale: n / seqs.length });
      const feed: Record<string, Feed> = { ...f, ...extra };
      if (!(b.refLogprobs && algo.klMode === 'loss')) delete feed.ref_logprobs;
      const res = await (P > 0 ? learner.step(feed, L, P) : learner.step(feed, L === T ? undefined : L));
      steps++;
      if (!res.applied) allApplied = false;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
      if (epoch === 0) seqs.forEach((s, j) => stepLogprobs.set(res.logprobs.subarray(j * L, j * L + Math.min(L, T - offset[s])), s * T + offset[s]));
      if (epoch === 0 && c === 0) mismatch = firstMismatch(check ?? { logprobs: b.oldLogprobs, mask: b.mask }, res.logprobs, seqs, offset, L, T);
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / Math.max(1, steps);
  return { metrics, steps, allApplied, mismatch, stepLogprobs };
}

type FeedSet = { f: Record<string, Int32Array | Float32Array>; extra: Record<string, Float32Array> };

/** Feed buffers per shape [B·L] (+ the prefix inputs [G·P]), made on first use of a shape. */
function feedBuffers(B: number, G: number, extraKeys: readonly string[]): (L: number, P: number) => FeedSet {
  const buffers = new Map<string, FeedSet>();
  return (L, P) => {
    const key = `${L}/${P}`;
    let x = buffers.get(key);
    if (!x) {
      const f: Record<string, Int32Array | Float32Array> = {
        tokens: new Int32Array(B * L),
        actions: new Int32Array(B * L),
        advantages: new Float32Array(B * L),
        old_logprobs: new Float32Array(B * L),
        weights: new Float32Array(B * L),
        mask: new Float32Array(B * L),
        ref_logprobs: new Float32Array(B * L),
      };
      if (P > 0) Object.assign(f, { positions: new Int32Array(B * L), prefix: new Int32Array(G * P), prefix_bias: new Float32Array(G * P) });
      const extra: Record<string, Float32Array> = {};
      for (const k of extraKeys) extra[k] = new Float32Array(B * L);
      x = { f, extra };
      buffers.set(key, x);
    }
    return x;
  };
}

/**
 * Copies sequences `seqs` into one minibatch of length L (from each one's prefix offset; with a
 * shared prefix, P > 0, each group's prefix goes to the prefix inputs once); weights × scale.
 */
function fillMinibatch(
  f: FeedSet['f'],
  extra: FeedSet['extra'],
  b: TokenUpdateBatch,
  seqs: readonly number[],
  offset: Int32Array,
  d: { L: number; P: number; N: number; T: number; scale: number },
): void {
  const { L, P, N, T, scale } = d;
  seqs.forEach((s, j) => {
    const src = s * T + offset[s], dst = j * L;
    const m = Math.min(L, T - offset[s]);
    f.tokens.set(b.tokens.subarray(src, src + m), dst);
    f.actions.set(b.actions.subarray(src, src + m), dst);
    f.mask.set(b.mask.subarray(src, src + m), dst);
    f.old_logprobs.set(b.oldLogprobs.subarray(src, src + m), dst);
    for (let t = 0; t < m; t++) {
      f.advantages[dst + t] = b.advantages[src + t];
      f.weights[dst + t] = b.weights[src + t] * scale;
    }
    if (b.refLogprobs) f.ref_logprobs.set(b.refLogprobs.subarray(src, src + m), dst);
    for (const [k, a] of Object.entries(extra)) a.set(b.extra![k].subarray(src, src + m), dst);
    if (P > 0) {
      writePositions(f.positions as Int32Array, j, L, offset[s], T);
      if (j % N === 0) {
        f.prefix_bias.fill(MASKED_BIAS, (j / N) * P, (j / N + 1) * P);
        writePrefix(f.prefix as Int32Array, f.prefix_bias as Float32Array, j / N, P, b.tokens, s, T, offset[s]);
      }
    }
  });
}

/** TITO check on the first minibatch: the learner's pre-update log-probs vs `src` where its mask is on. */
function firstMismatch(
  src: { logprobs: Float32Array; mask: Float32Array },
  learnerLogp: Float32Array,
  seqs: readonly number[],
  offset: Int32Array,
  L: number,
  T: number,
): { absDiffMean: number; absDiffMax: number } {
  const want = new Float32Array(seqs.length * L);
  const on = new Float32Array(seqs.length * L);
  seqs.forEach((s, j) => {
    const o = s * T + offset[s];
    const m = Math.min(L, T - offset[s]);
    want.set(src.logprobs.subarray(o, o + m), j * L);
    on.set(src.mask.subarray(o, o + m), j * L);
  });
  return logprobMismatch(want, learnerLogp.subarray(0, seqs.length * L), on);
}

/** Additive attention bias on a shared prefix's padding (TransformerPolicy.withSharedPrefix). */
const MASKED_BIAS = -1e9;

/**
 * Shared-prefix feeds: row `i` of prefix/bias [G·P] gets the first `c` tokens of sequence `s`
 * (of T) and bias 0 over them (the caller fills the padding: PAD tokens, MASKED_BIAS).
 */
function writePrefix(prefix: Int32Array, bias: Float32Array, i: number, P: number, tokens: Int32Array, s: number, T: number, c: number): void {
  prefix.set(tokens.subarray(s * T, s * T + c), i * P);
  bias.fill(0, i * P, i * P + c);
}

/** Row `j` of positions [B·S]: a suffix starting after a c-token prefix (padding clamped to T − 1). */
function writePositions(positions: Int32Array, j: number, S: number, c: number, T: number): void {
  for (let t = 0; t < S; t++) positions[j * S + t] = Math.min(c + t, T - 1);
}

/**
 * Per group of N consecutive sequences: how many first tokens all of them share and the train
 * step may run once (at most `most`), c_g ≤ the group's first masked position (the logits there
 * score the first policy token, so that position stays in every sequence's own suffix).
 */
export function sharedPrefixes(b: { n: number; T: number; tokens: Int32Array; mask: ArrayLike<number> }, N: number, most: number): Int32Array {
  const { n, T, tokens, mask } = b;
  const out = new Int32Array(Math.floor(n / N));
  for (let g = 0; g < out.length; g++) {
    const r0 = g * N * T;
    let c = Math.min(most, T - 1);
    for (let k = 0; k < N; k++) {
      const r = (g * N + k) * T;
      for (let t = 0; t < c; t++) {
        if (mask[r + t] || tokens[r + t] !== tokens[r0 + t]) {
          c = t;
          break;
        }
      }
    }
    out[g] = Math.max(0, c);
  }
  return out;
}
