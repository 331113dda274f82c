/**
 * The parts of a token-policy update that do not depend on how episodes were collected: scoring
 * sequences with a policy runner (reference or proximal log-probs) and the epochs × minibatches
 * loop of the ONNX train step over whole sequences.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { logprobMismatch } from '../algos/offpolicy.ts';
import { PAD } from '../text/codec.ts';
import type { Rng } from '../util/rng.ts';
import type { Feed, Learner, PolicyRunner } from './engine.ts';

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
}

/**
 * `algo.updateEpochs` × minibatches of whole sequences through the learner's static batch.
 * Each minibatch is one optimizer step of comparable scale: its weights are scaled by n / rows.
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
  if (n === 0) return { metrics: {}, steps: 0, allApplied: true };
  const B = learner.batch;
  const chunks = Math.max(algo.minibatches, Math.ceil(n / B));
  const per = Math.ceil(n / chunks);
  const f = {
    tokens: new Int32Array(B * T),
    actions: new Int32Array(B * T),
    advantages: new Float32Array(B * T),
    old_logprobs: new Float32Array(B * T),
    weights: new Float32Array(B * T),
    mask: new Float32Array(B * T),
    ref_logprobs: new Float32Array(B * T),
  };
  const extra: Record<string, Float32Array> = {};
  for (const k of Object.keys(b.extra ?? {})) extra[k] = new Float32Array(B * T);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
    rng.shuffle(order);
    for (let c = 0; c < chunks; c++) {
      const seqs = order.slice(c * per, Math.min(n, (c + 1) * per));
      if (seqs.length === 0) continue;
      for (const a of Object.values(f)) a.fill(0);
      for (const a of Object.values(extra)) a.fill(0);
      const scale = n / seqs.length;
      seqs.forEach((s, j) => {
        const src = s * T, dst = j * T;
        f.tokens.set(b.tokens.subarray(src, src + T), dst);
        f.actions.set(b.actions.subarray(src, src + T), dst);
        f.mask.set(b.mask.subarray(src, src + T), dst);
        f.old_logprobs.set(b.oldLogprobs.subarray(src, src + T), dst);
        for (let t = 0; t < T; t++) {
          f.advantages[dst + t] = b.advantages[src + t];
          f.weights[dst + t] = b.weights[src + t] * scale;
        }
        if (b.refLogprobs) f.ref_logprobs.set(b.refLogprobs.subarray(src, src + T), dst);
        for (const [k, a] of Object.entries(extra)) a.set(b.extra![k].subarray(src, src + T), dst);
      });
      const feed: Record<string, Feed> = { tokens: f.tokens, actions: f.actions, advantages: f.advantages, old_logprobs: f.old_logprobs, weights: f.weights, mask: f.mask, ...extra };
      if (b.refLogprobs && algo.klMode === 'loss') feed.ref_logprobs = f.ref_logprobs;
      const res = await learner.step(feed);
      steps++;
      if (!res.applied) allApplied = false;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
      if (epoch === 0 && c === 0) {
        const m = seqs.length * T;
        const want = new Float32Array(m);
        const on = new Float32Array(m);
        const src = check ?? { logprobs: b.oldLogprobs, mask: b.mask };
        seqs.forEach((s, j) => {
          want.set(src.logprobs.subarray(s * T, (s + 1) * T), j * T);
          on.set(src.mask.subarray(s * T, (s + 1) * T), j * T);
        });
        mismatch = logprobMismatch(want, res.logprobs.subarray(0, m), on);
      }
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / Math.max(1, steps);
  return { metrics, steps, allApplied, mismatch };
}
