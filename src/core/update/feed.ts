/**
 * What the update loop (update/update.ts) and the model's feed writers (update/rowFeed.ts,
 * update/sequenceFeed.ts) agree on: the per-position targets, and how a minibatch becomes a feed.
 */
import type { Feed } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';

/** The per-position training targets of a batch, [size] each. */
export interface UpdateTargets {
  /** π_old the ratio is taken against (μ, or the proximal policy on stale positions). */
  oldLogp: Float32Array;
  /** Advantages (TIS-weighted on stale positions), 0 off the mask. */
  advantages: ArrayLike<number>;
  /** Aggregation weights (summing over the batch as the aggregation mode says). */
  weights: ArrayLike<number>;
  /** The reference's log-probs, fed with klMode 'loss'; null without a reference. */
  refLogp: Float32Array | null;
  /** Further per-position train-graph inputs (a critic's `returns`, `old_values`; `prox_mask`). */
  extra?: Readonly<Record<string, Float32Array>>;
}

/** One minibatch written into feed buffers. */
export interface WrittenMinibatch {
  feed: Record<string, Feed>;
  /** Sequence length and shared-prefix length of the step (transformer), else undefined. */
  seqLen?: number;
  prefixLen?: number;
  /** Batch position of each slot of the learner's log-probs output, −1 for padding. */
  slots: Int32Array;
}

/** How the model takes minibatches: this epoch's plan, and one minibatch's feed. */
export interface FeedWriter<M> {
  plan(rng: Rng): M[];
  write(mb: M, targets: UpdateTargets): WrittenMinibatch;
}
