/**
 * The update phase for a step policy: `algo.updateEpochs` × minibatches of rows through the
 * learner's static batch (B rows per train step; unused slots masked out).
 */
import type { AlgoConfig } from '../algos/config.ts';
import { logprobMismatch } from '../algos/offpolicy.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
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
 * Whether minibatches take whole episodes: GSPO's sequence ratio (over all of an episode's steps)
 * and 'sequence' aggregation (a mean over each episode's steps) are per-episode quantities, exact
 * only when all of an episode's rows are in one train step. Otherwise rows are shuffled one by one.
 */
export function wholeEpisodes(algo: Pick<AlgoConfig, 'algo' | 'aggregation'>): boolean {
  return sequenceRatio(algo) || algo.aggregation === 'sequence';
}

/** The loss takes one ratio per episode (GSPO's objective), so an episode's rows must stay in one train step. */
function sequenceRatio(algo: Pick<AlgoConfig, 'algo'>): boolean {
  return algoDescriptor(algo.algo).loss.objective === 'gspo';
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
 * Each epoch, cuts the rows into max(minibatches, ⌈S/B⌉) minibatches (about that many with whole
 * episodes): shuffled row by row, or, for GSPO and 'sequence' aggregation (`wholeEpisodes`), as
 * whole episodes in shuffled order (`episodeMinibatches`). Every optimizer step has the scale of
 * the whole batch: row by row, a minibatch's weights are scaled by S / rows; whole episodes, by
 * Σ of all weights / Σ of the minibatch's (n / k for k of n episodes under 'sequence'
 * aggregation, so a minibatch's objective is the mean over its own episodes, as on the token
 * path). With `reference` (KL as a loss), its log-probs of the actions go in too.
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
  const seqIds = sequenceRatio(algo) ? new Int32Array(B) : null;
  const sums: Record<string, number> = {};
  let steps = 0;
  let allApplied = true;
  let mismatch: StepUpdateResult['mismatch'];
  const whole = wholeEpisodes(algo);
  // Whole episodes: each episode's first row and length (rows are in episode order).
  const starts: number[] = [];
  const lengths: number[] = [];
  if (whole) {
    for (let r = 0; r < S; r++) {
      if (r === 0 || rows.episode[r] !== rows.episode[r - 1]) {
        starts.push(r);
        lengths.push(0);
      }
      lengths[lengths.length - 1]++;
    }
  }
  let weightSum = 0;
  if (whole) for (let r = 0; r < S; r++) weightSum += targets.weights[r];
  const order = Array.from({ length: whole ? starts.length : S }, (_, i) => i);
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    opts.rng.shuffle(order);
    const minibatches = whole ? episodeMinibatches(order, starts, lengths, chunks, B, !sequenceRatio(algo)) : null;
    const count = minibatches ? minibatches.length : chunks;
    for (let c = 0; c < count; c++) {
      const batchRows = minibatches ? minibatches[c] : order.slice(c * per, Math.min(S, (c + 1) * per));
      if (batchRows.length === 0) continue;
      for (const a of [obs, actions, advantages, oldLogp, weights, mask, returns, oldValues]) a.fill(0);
      seqIds?.fill(0);
      const seqOf = new Map<number, number>();
      let scale = S / batchRows.length;
      if (whole) {
        let mb = 0;
        for (const r of batchRows) mb += targets.weights[r];
        scale = mb > 0 ? weightSum / mb : 1;
      }
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
