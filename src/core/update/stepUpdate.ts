/**
 * The update phase for a step policy: `algo.updateEpochs` × minibatches of rows through the
 * learner's static batch (B rows per train step; unused slots masked out).
 */
import type { AlgoConfig } from '../algos/config.ts';
import { logprobMismatch } from '../algos/offpolicy.ts';
import type { Feed, Learner, PolicyRunner } from '../engine/types.ts';
import type { Rng } from '../util/rng.ts';
import type { StepRows } from './stepBatch.ts';

/** The per-row training targets of one batch, [S] each. */
export interface StepTargets {
  /** π_old of each row (see stepOffPolicy). */
  oldLogp: Float32Array;
  advantages: Float64Array;
  /** Aggregation weights (summing over the batch as the aggregation mode says). */
  weights: Float64Array;
  /** Value targets (used with a value head). */
  returns: Float64Array;
}

export interface StepUpdateResult {
  /** Learner metrics averaged over the optimizer steps. */
  metrics: Record<string, number>;
  steps: number;
  /** False when the NaN guard skipped at least one step. */
  allApplied: boolean;
  /** TITO check on the first minibatch's fresh rows; undefined without fresh rows there. */
  mismatch?: { absDiffMean: number; absDiffMax: number };
}

/**
 * Shuffles the rows each epoch and cuts them into max(minibatches, ⌈S/B⌉) minibatches; each
 * minibatch's weights are scaled by S / rows so that every optimizer step has the scale of the
 * whole batch. With `reference` (KL as a loss), its log-probs of the actions go in too.
 * @param version the learner's version: rows sampled by it are fresh, and before the first
 *   update the learner must agree with their μ (`mismatch`); stale rows differ by design.
 */
export async function runStepUpdate(
  learner: Learner,
  algo: AlgoConfig,
  rows: StepRows,
  targets: StepTargets,
  opts: { rng: Rng; version: number; valueHead: boolean; reference: PolicyRunner | null; numActions: number },
): Promise<StepUpdateResult> {
  const { S, D } = rows;
  const A = opts.numActions;
  const B = learner.batch;
  const chunks = Math.max(algo.minibatches, Math.ceil(S / B));
  const per = Math.ceil(S / chunks);
  const obs = new Float32Array(B * D);
  const actions = new Int32Array(B);
  const advantages = new Float32Array(B);
  const oldLogp = new Float32Array(B);
  const weights = new Float32Array(B);
  const mask = new Float32Array(B);
  const returns = new Float32Array(B);
  const oldValues = new Float32Array(B);
  const refLogp = new Float32Array(B);
  // GSPO: which rows of a minibatch belong to one episode (ids compacted below B, as the graph needs).
  const seqIds = algo.algo === 'gspo' ? new Int32Array(B) : null;
  const sums: Record<string, number> = {};
  let steps = 0;
  let allApplied = true;
  let mismatch: StepUpdateResult['mismatch'];
  const order = Array.from({ length: S }, (_, i) => i);
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    opts.rng.shuffle(order);
    for (let c = 0; c < chunks; c++) {
      const batchRows = order.slice(c * per, Math.min(S, (c + 1) * per));
      if (batchRows.length === 0) continue;
      for (const a of [obs, actions, advantages, oldLogp, weights, mask, returns, oldValues]) a.fill(0);
      seqIds?.fill(0);
      const seqOf = new Map<number, number>();
      const scale = S / batchRows.length;
      batchRows.forEach((r, j) => {
        obs.set(rows.obs.subarray(r * D, (r + 1) * D), j * D);
        actions[j] = rows.actions[r];
        advantages[j] = targets.advantages[r];
        oldLogp[j] = targets.oldLogp[r];
        weights[j] = targets.weights[r] * scale;
        mask[j] = 1;
        returns[j] = targets.returns[r];
        oldValues[j] = rows.values[r];
        if (seqIds) seqIds[j] = seqOf.get(rows.episode[r]) ?? seqOf.set(rows.episode[r], seqOf.size).size - 1;
      });
      const batch: Record<string, Feed> = { obs, actions, advantages, old_logprobs: oldLogp, weights, mask };
      if (opts.valueHead) batch.returns = returns;
      if (opts.valueHead && algo.valueClip !== null) batch.old_values = oldValues;
      if (seqIds) batch.seq_ids = seqIds;
      if (opts.reference) {
        const ref = await opts.reference.run({ obs });
        for (let j = 0; j < B; j++) refLogp[j] = ref.logprobs[j * A + actions[j]];
        batch.ref_logprobs = refLogp;
      }
      const res = await learner.step(batch);
      steps++;
      if (!res.applied) allApplied = false;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
      if (epoch === 0 && c === 0) {
        const fresh = Float32Array.from(batchRows, (r) => (rows.versions[r] === opts.version ? 1 : 0));
        if (fresh.some((f) => f === 1)) mismatch = logprobMismatch(Float32Array.from(batchRows, (r) => rows.mu[r]), res.logprobs.subarray(0, batchRows.length), fresh);
      }
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / Math.max(1, steps);
  return { metrics, steps, allApplied, mismatch };
}
