/**
 * Scoring sequences with a transformer (reference or proximal log-probs of a batch fed as padded
 * sequences) at the shortest length buckets that hold them, and the shared-prefix helpers the
 * scorer and the transformer's minibatches (update/sequenceFeed.ts) use.
 */
import type { PolicyModel, Weights } from '../models/types.ts';
import { PAD } from '../text/codec.ts';
import type { InferenceEngine, PolicyRunner } from '../models/runners.ts';
import type { RolloutBatch } from './batch.ts';
import type { PositionScorer } from './offPolicy.ts';
import { maskWords } from '../text/grammar.ts';

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

/**
 * log π(action) under a row of log-probs (offset o, V entries), renormalised over the actions a
 * packed mask allows (at word offset a, text/grammar.ts): the masked policy's log-prob, as the
 * rollout sampled it and the learner's logit mask computes it. Float64; without a mask, the row's own.
 */
export function maskedLogprob(logprobs: ArrayLike<number>, o: number, V: number, action: number, allow: Uint32Array | undefined, a: number): number {
  if (!allow) return logprobs[o + action];
  let max = -Infinity;
  for (let v = 0; v < V; v++) if ((allow[a + (v >>> 5)] >>> (v & 31)) & 1) max = Math.max(max, logprobs[o + v]);
  let sum = 0;
  for (let v = 0; v < V; v++) if ((allow[a + (v >>> 5)] >>> (v & 31)) & 1) sum += Math.exp(logprobs[o + v] - max);
  return logprobs[o + action] - max - Math.log(sum);
}

/** The first L positions of each of n rows of T: [n·T] → [n·L]. */
export function truncateRows<A extends Int32Array | Float32Array>(a: A, n: number, T: number, L: number): A {
  if (L === T) return a;
  const out = new (a.constructor as new (len: number) => A)(n * L);
  for (let s = 0; s < n; s++) out.set(a.subarray(s * T, s * T + L), s * L);
  return out;
}

/** Sequences a scorer scores: padded to T, with the trained positions' masks when decoding was constrained. */
export interface ScoredSequences {
  tokens: Int32Array;
  actions: Int32Array;
  mask: ArrayLike<number>;
  n: number;
  T: number;
  V: number;
  groupSize?: number;
  /** [n·T·maskWords(V)] packed masks (SequenceFeed.allow); absent = unconstrained. */
  allow?: Uint32Array;
}

/**
 * Scores sequences with one policy runner per length bucket (created on first use): the
 * reference or proximal log-probs of a token update without the full context's padding.
 * Positions past a sequence's last masked one are not scored (they stay 0).
 */
export class SequenceScorer implements PositionScorer {
  /** By `${T}`, or `${S}/${P}` for shared-prefix runners. */
  private readonly runners = new Map<string, Promise<PolicyRunner>>();
  private weights: Weights;
  private version: number;

  constructor(
    private readonly engine: Pick<InferenceEngine, 'createPolicy'>,
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
  async logprobs(b: ScoredSequences, rows?: readonly number[]): Promise<Float32Array> {
    const { n, T, V } = b;
    const W = maskWords(V);
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
        for (let t = 0; t < L; t++) {
          // Only trained positions need the masked renormalisation; the rest stay the raw row's.
          const allow = b.mask[s * T + t] ? b.allow : undefined;
          out[s * T + t] = maskedLogprob(r.logprobs, (j * L + t) * V, V, b.actions[s * T + t], allow, (s * T + t) * W);
        }
      });
    }
    return out;
  }

  /**
   * A rollout batch fed as sequences: the sequences holding `positions` are scored whole (all of
   * them, with shared prompts run once per group, when positions is undefined).
   */
  async logprobsAt(b: RolloutBatch, positions?: readonly number[]): Promise<Float32Array> {
    if (b.feed.kind !== 'sequences') throw new Error('SequenceScorer: the batch is not fed as sequences');
    const { T, V, tokens, actions, groupSize, allow } = b.feed;
    const seqs = positions ? [...new Set(positions.map((p) => Math.floor(p / T)))] : undefined;
    return this.logprobs({ tokens, actions, mask: b.mask, n: b.n, T, V, groupSize, allow }, seqs);
  }

  /** logprobs() over whole groups of `b.groupSize` sequences, each group's shared prefix run once. */
  private async sharedLogprobs(b: ScoredSequences, need: Int32Array): Promise<Float32Array> {
    const { n, T, V } = b;
    const W = maskWords(V);
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
          for (let t = 0; t < Math.min(S, T - off[g]); t++) {
            const p = s * T + off[g] + t;
            out[p] = maskedLogprob(r.logprobs, (j * S + t) * V, V, b.actions[p], b.mask[p] ? b.allow : undefined, p * W);
          }
        }
      });
    }
    return out;
  }

  async release(): Promise<void> {
    await Promise.all([...this.runners.values()].map(async (r) => (await r).release()));
  }
}

/** Additive attention bias on a shared prefix's padding (TransformerPolicy.withSharedPrefix). */
export const MASKED_BIAS = -1e9;

/**
 * Shared-prefix feeds: row `i` of prefix/bias [G·P] gets the first `c` tokens of sequence `s`
 * (of T) and bias 0 over them (the caller fills the padding: PAD tokens, MASKED_BIAS).
 */
export function writePrefix(prefix: Int32Array, bias: Float32Array, i: number, P: number, tokens: Int32Array, s: number, T: number, c: number): void {
  prefix.set(tokens.subarray(s * T, s * T + c), i * P);
  bias.fill(0, i * P, i * P + c);
}

/** Row `j` of positions [B·S]: a suffix starting after a c-token prefix (padding clamped to T − 1). */
export function writePositions(positions: Int32Array, j: number, S: number, c: number, T: number): void {
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
