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
import type { Engine, Feed, Learner, PolicyRunner } from './engine.ts';

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
  private readonly runners = new Map<number, Promise<PolicyRunner>>();
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

  private runner(T: number): Promise<PolicyRunner> {
    let r = this.runners.get(T);
    if (!r) {
      r = this.engine.createPolicy(this.model, this.batch, this.weights, T).then((p) => {
        p.setWeights(this.weights, this.version);
        return p;
      });
      this.runners.set(T, r);
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
  async logprobs(b: { tokens: Int32Array; actions: Int32Array; mask: ArrayLike<number>; n: number; T: number; V: number }, rows?: readonly number[]): Promise<Float32Array> {
    const { n, T, V } = b;
    const need = neededLengths(b.mask, n, T);
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
  const bucket = Int32Array.from(need, (x) => bucketFor(lens, x, T));
  // Feed buffers per sequence length [B·L].
  const buffers = new Map<number, { f: Record<string, Feed>; extra: Record<string, Float32Array> }>();
  const buffersFor = (L: number) => {
    let x = buffers.get(L);
    if (!x) {
      const f = {
        tokens: new Int32Array(B * L),
        actions: new Int32Array(B * L),
        advantages: new Float32Array(B * L),
        old_logprobs: new Float32Array(B * L),
        weights: new Float32Array(B * L),
        mask: new Float32Array(B * L),
        ref_logprobs: new Float32Array(B * L),
      };
      const extra: Record<string, Float32Array> = {};
      for (const k of Object.keys(b.extra ?? {})) extra[k] = new Float32Array(B * L);
      x = { f, extra };
      buffers.set(L, x);
    }
    return x;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    rng.shuffle(order);
    if (lens) order.sort((x, y) => bucket[x] - bucket[y]); // stable: shuffled within a bucket
    for (let c = 0; c < chunks; c++) {
      const seqs = order.slice(c * per, Math.min(n, (c + 1) * per));
      if (seqs.length === 0) continue;
      const L = Math.max(...seqs.map((s) => bucket[s]));
      const { f, extra } = buffersFor(L);
      for (const a of Object.values(f)) a.fill(0);
      for (const a of Object.values(extra)) a.fill(0);
      const scale = n / seqs.length;
      seqs.forEach((s, j) => {
        const src = s * T, dst = j * L;
        f.tokens.set(b.tokens.subarray(src, src + L), dst);
        f.actions.set(b.actions.subarray(src, src + L), dst);
        f.mask.set(b.mask.subarray(src, src + L), dst);
        f.old_logprobs.set(b.oldLogprobs.subarray(src, src + L), dst);
        for (let t = 0; t < L; t++) {
          f.advantages[dst + t] = b.advantages[src + t];
          f.weights[dst + t] = b.weights[src + t] * scale;
        }
        if (b.refLogprobs) f.ref_logprobs.set(b.refLogprobs.subarray(src, src + L), dst);
        for (const [k, a] of Object.entries(extra)) a.set(b.extra![k].subarray(src, src + L), dst);
      });
      const feed: Record<string, Feed> = { tokens: f.tokens, actions: f.actions, advantages: f.advantages, old_logprobs: f.old_logprobs, weights: f.weights, mask: f.mask, ...extra };
      if (b.refLogprobs && algo.klMode === 'loss') feed.ref_logprobs = f.ref_logprobs;
      const res = await learner.step(feed, L === T ? undefined : L);
      steps++;
      if (!res.applied) allApplied = false;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
      if (epoch === 0) seqs.forEach((s, j) => stepLogprobs.set(res.logprobs.subarray(j * L, (j + 1) * L), s * T));
      if (epoch === 0 && c === 0) {
        const m = seqs.length * L;
        const want = new Float32Array(m);
        const on = new Float32Array(m);
        const src = check ?? { logprobs: b.oldLogprobs, mask: b.mask };
        seqs.forEach((s, j) => {
          want.set(src.logprobs.subarray(s * T, s * T + L), j * L);
          on.set(src.mask.subarray(s * T, s * T + L), j * L);
        });
        mismatch = logprobMismatch(want, res.logprobs.subarray(0, m), on);
      }
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / Math.max(1, steps);
  return { metrics, steps, allApplied, mismatch, stepLogprobs };
}
