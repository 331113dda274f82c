/**
 * The MLP's minibatches: a batch's positions as packed rows, B per train step (unused slots
 * masked out). Each epoch cuts the rows into max(minibatches, ⌈S/B⌉) minibatches: for GSPO and
 * 'sequence' aggregation (`wholeEpisodes`) as whole episodes in shuffled order
 * (`episodeMinibatches`); otherwise row by row, shuffled, since an MLP row's loss does not depend
 * on the other rows of its episode and nothing per-episode is in the loss then.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import type { Feed, Learner } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';
import type { RolloutBatch, RowFeed } from './batch.ts';
import type { FeedWriter, UpdateTargets, WrittenMinibatch } from './feed.ts';

/** The loss takes one ratio per episode (GSPO's and GMPO's objectives), so an episode's rows must stay in one train step. */
function sequenceRatio(algo: Pick<AlgoConfig, 'algo'>): boolean {
  const o = algoDescriptor(algo.algo).loss.objective;
  return o === 'gspo' || o === 'gmpo';
}

/**
 * Whether minibatches take whole episodes: GSPO's sequence ratio (over all of an episode's steps)
 * and 'sequence' aggregation (a mean over each episode's steps) are per-episode quantities, exact
 * only when all of an episode's rows are in one train step. Otherwise rows are shuffled one by one.
 */
export function wholeEpisodes(algo: Pick<AlgoConfig, 'algo' | 'aggregation'>): boolean {
  return sequenceRatio(algo) || algo.aggregation === 'sequence';
}

/**
 * One epoch's minibatches of whole episodes, as lists of rows (each episode's rows in order).
 * Episodes are taken in `order` and cut into about `chunks` minibatches of S/chunks rows: an
 * episode joins the minibatch its middle row falls in (of `chunks` equal spans of the shuffled
 * rows), and starts a new one where it would overflow `B` rows. An episode longer than B rows
 * cannot be whole: with `split` it is cut into pieces of ≤ B consecutive rows, each a minibatch
 * of its own; without, it is an error (GSPO: its ratio needs the whole episode).
 * @param starts [n] first row of each episode; lengths [n] its rows.
 */
export function episodeMinibatches(order: readonly number[], starts: ArrayLike<number>, lengths: ArrayLike<number>, chunks: number, B: number, split: boolean): number[][] {
  const S = order.reduce((s, e) => s + lengths[e], 0);
  const span = S / chunks;
  const out: number[][] = [];
  const rowsOf = (e: number, from = 0, to = lengths[e]) => Array.from({ length: to - from }, (_, t) => starts[e] + from + t);
  let cur: number[] = [];
  let curChunk = -1;
  let at = 0;
  for (const e of order) {
    const len = lengths[e];
    if (len > B) {
      if (!split) throw new RangeError(`an episode of ${len} steps does not fit one train step of ${B} rows, and GSPO's sequence ratio needs all of it in one; raise rollout.learnerBatch to at least the env's maxSteps`);
      if (cur.length > 0) out.push(cur);
      for (let o = 0; o < len; o += B) out.push(rowsOf(e, o, Math.min(len, o + B)));
      cur = [];
      curChunk = -1;
      at += len;
      continue;
    }
    const chunk = Math.min(chunks - 1, Math.floor((at + len / 2) / span));
    if (cur.length > 0 && (chunk !== curChunk || cur.length + len > B)) {
      out.push(cur);
      cur = [];
    }
    if (cur.length === 0) curChunk = chunk;
    for (let t = 0; t < len; t++) cur.push(starts[e] + t);
    at += len;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Every optimizer step has the scale of the whole batch: row by row, a minibatch's weights are
 * scaled by S / rows; whole episodes, by Σ of all weights / Σ of the minibatch's (n / k for k of
 * n episodes under 'sequence' aggregation, so a minibatch's objective is the mean over its own
 * episodes, as for sequences).
 */
export class RowFeedWriter implements FeedWriter<number[]> {
  private readonly feedIn: RowFeed;
  private readonly B: number;
  private readonly whole: boolean;
  private readonly chunks: number;
  private readonly order: number[];
  private readonly weightSum: number = 0;
  /** [size] each row's episode (GSPO's sequences). */
  private readonly seqOf: Int32Array;
  private readonly buf: Record<string, Float32Array | Int32Array>;

  constructor(
    learner: Learner,
    private readonly algo: AlgoConfig,
    private readonly b: RolloutBatch,
    targets: UpdateTargets,
  ) {
    if (b.feed.kind !== 'rows') throw new Error('RowFeedWriter: the batch is not fed as rows');
    this.feedIn = b.feed;
    const B = (this.B = learner.batch);
    this.whole = wholeEpisodes(algo);
    this.chunks = Math.max(algo.minibatches, Math.ceil(b.size / B));
    this.order = Array.from({ length: this.whole ? b.n : b.size }, (_, i) => i);
    if (this.whole) for (let r = 0; r < b.size; r++) this.weightSum += targets.weights[r];
    this.seqOf = new Int32Array(b.size);
    for (let s = 0; s < b.n; s++) this.seqOf.fill(s, b.starts[s], b.starts[s] + b.lengths[s]);
    const f32 = () => new Float32Array(B);
    this.buf = { obs: new Float32Array(B * b.feed.D), actions: new Int32Array(B), advantages: f32(), old_logprobs: f32(), weights: f32(), mask: f32(), ref_logprobs: f32(), seq_ids: new Int32Array(B) };
    for (const k of Object.keys(targets.extra ?? {})) this.buf[k] = f32();
  }

  plan(rng: Rng): number[][] {
    rng.shuffle(this.order);
    if (this.whole) return episodeMinibatches(this.order, this.b.starts, this.b.lengths, this.chunks, this.B, !sequenceRatio(this.algo));
    const per = Math.ceil(this.b.size / this.chunks);
    const out: number[][] = [];
    for (let c = 0; c < this.chunks; c++) {
      const rows = this.order.slice(c * per, Math.min(this.b.size, (c + 1) * per));
      if (rows.length > 0) out.push(rows);
    }
    return out;
  }

  write(rows: number[], t: UpdateTargets): WrittenMinibatch {
    const { D } = this.feedIn;
    const f = this.buf;
    for (const a of Object.values(f)) a.fill(0);
    let scale = this.b.size / rows.length;
    if (this.whole) {
      let mb = 0;
      for (const r of rows) mb += t.weights[r];
      scale = mb > 0 ? this.weightSum / mb : 1;
    }
    const seqIds = new Map<number, number>();
    const slots = new Int32Array(this.B).fill(-1);
    rows.forEach((r, j) => {
      slots[j] = r;
      f.obs.set(this.feedIn.obs.subarray(r * D, (r + 1) * D), j * D);
      f.actions[j] = this.feedIn.actions[r];
      f.advantages[j] = t.advantages[r];
      f.old_logprobs[j] = t.oldLogp[r];
      f.weights[j] = t.weights[r] * scale;
      f.mask[j] = 1;
      if (t.refLogp) f.ref_logprobs[j] = t.refLogp[r];
      for (const [k, a] of Object.entries(t.extra ?? {})) f[k][j] = a[r];
      const e = this.seqOf[r];
      f.seq_ids[j] = seqIds.get(e) ?? seqIds.set(e, seqIds.size).size - 1;
    });
    const feed: Record<string, Feed> = { obs: f.obs, actions: f.actions, advantages: f.advantages, old_logprobs: f.old_logprobs, weights: f.weights, mask: f.mask };
    for (const k of Object.keys(t.extra ?? {})) feed[k] = f[k];
    // GSPO: which rows of a minibatch belong to one episode (ids compacted below B, as the graph needs).
    if (sequenceRatio(this.algo)) feed.seq_ids = f.seq_ids;
    if (t.refLogp && this.algo.klMode === 'loss') feed.ref_logprobs = f.ref_logprobs;
    return { feed, slots };
  }
}
