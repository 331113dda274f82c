/**
 * The transformer's minibatches: whole sequences through the learner's static batch. Each
 * minibatch is one optimizer step of comparable scale: its weights are scaled by n / sequences.
 * When the learner takes shorter sequence lengths (Learner.seqLens), each epoch's shuffled order
 * is grouped by length bucket before it is cut into minibatches (as group-by-length sampling
 * does), and each minibatch runs at the shortest length that holds its sequences' trained
 * positions: the same loss and gradient, on fewer padded positions. With equal groups sharing a
 * prompt and a learner made for them (prefixGroups), each minibatch is whole groups and each
 * group's common prefix runs once.
 */
import type { AlgoConfig } from '../algos/config.ts';
import type { Feed, Learner } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';
import type { RolloutBatch, SequenceFeed } from './batch.ts';
import { bucketFor, MASKED_BIAS, neededLengths, sharedPrefixes, writePositions, writePrefix } from './sequenceScorer.ts';
import type { FeedWriter, UpdateTargets, WrittenMinibatch } from './feed.ts';
import { LOGIT_MASK, LOGIT_MASKED } from './trainStep.ts';
import { maskWords } from '../text/grammar.ts';

/**
 * Positions src … src + m − 1 of a packed mask [·W] as additive logits at positions dst … of
 * `out` [·V]: 0 where allowed, LOGIT_MASKED where not.
 */
export function writeLogitMask(out: Float32Array, dst: number, allow: Uint32Array, src: number, m: number, V: number): void {
  const W = maskWords(V);
  for (let k = 0; k < m; k++) {
    const o = (dst + k) * V;
    const a = (src + k) * W;
    for (let v = 0; v < V; v++) out[o + v] = (allow[a + (v >>> 5)] >>> (v & 31)) & 1 ? 0 : LOGIT_MASKED;
  }
}

type FeedSet = { f: Record<string, Int32Array | Float32Array>; extra: Record<string, Float32Array> };

export class SequenceFeedWriter implements FeedWriter<number[]> {
  private readonly feedIn: SequenceFeed;
  private readonly B: number;
  private readonly chunks: number;
  private readonly lens: readonly number[] | undefined;
  /** Sequences per group sharing a prefix (0 = no sharing) and groups per minibatch. */
  private readonly N: number;
  private readonly G: number;
  private readonly prefix: Int32Array | null;
  /** [n] positions before each sequence's own suffix (its group's shared prefix; 0 without sharing). */
  private readonly offset: Int32Array;
  /** [n] the length bucket each sequence runs at. */
  private readonly bucket: Int32Array;
  private readonly order: number[];
  /** Sort key per entry of `order` (a group's longest bucket, or a sequence's). */
  private readonly key: Int32Array;
  private readonly buffers = new Map<string, FeedSet>();

  constructor(
    learner: Learner,
    private readonly algo: AlgoConfig,
    private readonly b: RolloutBatch,
    private readonly targets: UpdateTargets,
  ) {
    if (b.feed.kind !== 'sequences') throw new Error('SequenceFeedWriter: the batch is not fed as sequences');
    this.feedIn = b.feed;
    const { n } = b;
    const { T } = b.feed;
    const B = (this.B = learner.batch);
    this.chunks = Math.max(algo.minibatches, Math.ceil(n / B));
    const lens = (this.lens = learner.seqLens?.length ? learner.seqLens : undefined);
    const need = neededLengths(b.mask, n, T);
    const N = (this.N = b.feed.groupSize ?? 0);
    const G = (this.G = learner.prefixGroups ?? 0);
    const shares = lens && lens.length > 1 && G > 0 && N > 0 && G * N === B && n % B === 0 && this.chunks === n / B;
    this.prefix = shares ? sharedPrefixes({ n, T, tokens: b.feed.tokens, mask: b.mask }, N, lens[lens.length - 2] ?? 0) : null;
    const prefix = this.prefix;
    this.offset = prefix ? Int32Array.from({ length: n }, (_, s) => prefix[Math.floor(s / N)]) : new Int32Array(n);
    this.bucket = Int32Array.from(need, (x, s) => bucketFor(lens, x - this.offset[s], T));
    this.order = Array.from({ length: prefix ? n / N : n }, (_, i) => i); // groups or sequences
    this.key = prefix ? Int32Array.from(this.order, (g) => Math.max(...this.bucket.subarray(g * N, (g + 1) * N))) : this.bucket;
  }

  plan(rng: Rng): number[][] {
    const { n } = this.b;
    const { N, G, order } = this;
    rng.shuffle(order);
    if (this.lens) order.sort((x, y) => this.key[x] - this.key[y]); // stable: shuffled within a bucket
    const per = Math.ceil(n / this.chunks);
    const out: number[][] = [];
    for (let c = 0; c < this.chunks; c++) {
      const seqs = this.prefix
        ? order.slice(c * G, (c + 1) * G).flatMap((g) => Array.from({ length: N }, (_, k) => g * N + k))
        : order.slice(c * per, Math.min(n, (c + 1) * per));
      if (seqs.length > 0) out.push(seqs);
    }
    return out;
  }

  write(seqs: number[], t: UpdateTargets): WrittenMinibatch {
    const { T } = this.feedIn;
    const L = Math.max(...seqs.map((s) => this.bucket[s]));
    const P = this.prefix ? bucketFor(this.lens, Math.max(1, ...seqs.map((s) => this.offset[s])), T) : 0;
    const { f, extra } = this.buffersFor(L, P);
    for (const a of Object.values(f)) a.fill(0);
    for (const a of Object.values(extra)) a.fill(0);
    const slots = new Int32Array(this.B * L).fill(-1);
    this.fill(f, extra, t, seqs, slots, { L, P, scale: this.b.n / seqs.length });
    const feed: Record<string, Feed> = { ...f, ...extra };
    if (!(t.refLogp && this.algo.klMode === 'loss')) delete feed.ref_logprobs;
    return P > 0 ? { feed, seqLen: L, prefixLen: P, slots } : { feed, seqLen: L === T ? undefined : L, slots };
  }

  /** Feed buffers per shape [B·L] (+ the prefix inputs [G·P]), made on first use of a shape. */
  private buffersFor(L: number, P: number): FeedSet {
    const key = `${L}/${P}`;
    let x = this.buffers.get(key);
    if (!x) {
      const B = this.B;
      const f: Record<string, Int32Array | Float32Array> = {
        tokens: new Int32Array(B * L),
        actions: new Int32Array(B * L),
        advantages: new Float32Array(B * L),
        old_logprobs: new Float32Array(B * L),
        weights: new Float32Array(B * L),
        mask: new Float32Array(B * L),
        ref_logprobs: new Float32Array(B * L),
      };
      // Constrained decoding: the additive logit mask [B·L·V] (TrainStepOptions.logitMask).
      if (this.feedIn.allow) f[LOGIT_MASK] = new Float32Array(B * L * this.feedIn.V);
      if (P > 0) Object.assign(f, { positions: new Int32Array(B * L), prefix: new Int32Array(this.G * P), prefix_bias: new Float32Array(this.G * P) });
      const extra: Record<string, Float32Array> = {};
      for (const k of Object.keys(this.targets.extra ?? {})) extra[k] = new Float32Array(B * L);
      x = { f, extra };
      this.buffers.set(key, x);
    }
    return x;
  }

  /**
   * Copies sequences `seqs` into one minibatch of length L (from each one's prefix offset; with a
   * shared prefix, P > 0, each group's prefix goes to the prefix inputs once); weights × scale.
   */
  private fill(f: FeedSet['f'], extra: FeedSet['extra'], t: UpdateTargets, seqs: readonly number[], slots: Int32Array, d: { L: number; P: number; scale: number }): void {
    const { L, P, scale } = d;
    const { T, tokens, actions } = this.feedIn;
    const { N, offset } = this;
    seqs.forEach((s, j) => {
      const src = s * T + offset[s], dst = j * L;
      const m = Math.min(L, T - offset[s]);
      for (let k = 0; k < m; k++) slots[dst + k] = src + k;
      f.tokens.set(tokens.subarray(src, src + m), dst);
      f.actions.set(actions.subarray(src, src + m), dst);
      f.mask.set(this.b.mask.subarray(src, src + m), dst);
      f.old_logprobs.set(t.oldLogp.subarray(src, src + m), dst);
      for (let k = 0; k < m; k++) {
        f.advantages[dst + k] = t.advantages[src + k];
        f.weights[dst + k] = t.weights[src + k] * scale;
      }
      if (t.refLogp) f.ref_logprobs.set(t.refLogp.subarray(src, src + m), dst);
      if (this.feedIn.allow) writeLogitMask(f[LOGIT_MASK] as Float32Array, dst, this.feedIn.allow, src, m, this.feedIn.V);
      for (const [k, a] of Object.entries(extra)) a.set(t.extra![k].subarray(src, src + m), dst);
      if (P > 0) {
        writePositions(f.positions as Int32Array, j, L, offset[s], T);
        if (j % N === 0) {
          f.prefix_bias.fill(MASKED_BIAS, (j / N) * P, (j / N + 1) * P);
          writePrefix(f.prefix as Int32Array, f.prefix_bias as Float32Array, j / N, P, tokens, s, T, offset[s]);
        }
      }
    });
  }
}
