/**
 * The update phase over a rollout batch, for every policy: `algo.updateEpochs` × minibatches of
 * the ONNX train step. The loop (shuffling, optimizer steps, the NaN guard's count, the learner
 * metrics' mean, the TITO check) is written once; how a minibatch becomes the learner's feed is
 * the model's: packed rows for the MLP (update/rowFeed.ts), padded sequences for the transformer
 * (update/sequenceFeed.ts). Minibatches take whole sequences wherever a per-sequence quantity is
 * in the loss (GSPO's ratio, 'sequence' aggregation; always for the transformer, whose rows are
 * sequences); see ARCHITECTURE.md, 'The rollout batch'.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { logprobMismatch } from './importanceWeights.ts';
import type { Feed, Learner } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';
import type { RolloutBatch } from './batch.ts';
import { RowFeedWriter } from './rowFeed.ts';
import { SequenceFeedWriter } from './sequenceFeed.ts';
import type { FeedWriter, UpdateTargets } from './feed.ts';
import { covarianceSelection } from './covariance.ts';
import { COV_MASK } from './surrogates.ts';

export type { UpdateTargets } from './feed.ts';

export interface UpdateResult {
  /** Learner metrics averaged over the optimizer steps. */
  metrics: Record<string, number>;
  steps: number;
  /** False when the NaN guard skipped at least one step. */
  allApplied: boolean;
  /** Rollout vs learner log-probs on the first minibatch's fresh positions, before any update (TITO check). */
  mismatch?: { absDiffMean: number; absDiffMax: number };
  /** [size] the learner's log-probs in the first epoch, each at the weights of the step that trained it (before that step). */
  stepLogprobs: Float32Array;
}

/**
 * @param check what the first minibatch's pre-update learner log-probs are compared with: the
 *   rollout's μ on positions sampled by the weights being trained (stale positions were sampled
 *   by other weights and differ by design).
 */
export async function runUpdate(
  learner: Learner,
  algo: AlgoConfig,
  b: RolloutBatch,
  targets: UpdateTargets,
  rng: Rng,
  check: { logprobs: Float32Array; mask: Float32Array },
): Promise<UpdateResult> {
  const stepLogprobs = new Float32Array(b.size);
  if (b.n === 0) return { metrics: {}, steps: 0, allApplied: true, stepLogprobs };
  const writer: FeedWriter<unknown> = b.feed.kind === 'rows' ? new RowFeedWriter(learner, algo, b, targets) : new SequenceFeedWriter(learner, algo, b, targets);
  const sums: Record<string, number> = {};
  let steps = 0;
  let allApplied = true;
  let mismatch: UpdateResult['mismatch'];
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    const plan = writer.plan(rng);
    for (const [c, mb] of plan.entries()) {
      const w = writer.write(mb, targets);
      if (algo.covariance.mode !== 'off') w.feed[COV_MASK] = covarianceFeed(w.feed, algo, rng);
      const res = await learner.step(w.feed, w.seqLen, w.prefixLen);
      steps++;
      if (!res.applied) allApplied = false;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
      if (epoch > 0) continue;
      w.slots.forEach((p, j) => p >= 0 && (stepLogprobs[p] = res.logprobs[j]));
      if (c === 0) mismatch = firstMismatch(check, res.logprobs, w.slots);
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / Math.max(1, steps);
  return { metrics, steps, allApplied, mismatch, stepLogprobs };
}

/** Clip-Cov's or KL-Cov's selection for one minibatch, over its trained positions (policy tokens with a loss weight). */
function covarianceFeed(feed: Record<string, Feed>, algo: AlgoConfig, rng: Rng): Float32Array {
  const mask = feed.mask as Float32Array;
  const weights = feed.weights as Float32Array;
  const trained = Float32Array.from(mask, (m, i) => (m !== 0 && weights[i] !== 0 ? 1 : 0));
  return covarianceSelection(feed.advantages as Float32Array, feed.old_logprobs as Float32Array, trained, algo.covariance, rng);
}

/** TITO check: the learner's pre-update log-probs vs `check` where its mask is on (0, 0 when it is on nowhere: the key is logged every iteration). */
function firstMismatch(check: { logprobs: Float32Array; mask: Float32Array }, learnerLogp: Float32Array, slots: Int32Array): UpdateResult['mismatch'] {
  const want = new Float32Array(slots.length);
  const on = new Float32Array(slots.length);
  slots.forEach((p, j) => {
    if (p < 0) return;
    want[j] = check.logprobs[p];
    on[j] = check.mask[p];
  });
  return logprobMismatch(want, learnerLogp.subarray(0, slots.length), on);
}
