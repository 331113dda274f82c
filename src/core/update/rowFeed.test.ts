/**
 * The MLP's minibatches (update/rowFeed.ts, through runUpdate). GSPO's objective is derived here from the
 * paper, independently of the code under test:
 *
 *   s_i(θ) = exp((1/|y_i|) Σ_t log(π_θ(y_i,t) / π_old(y_i,t)))
 *   J(θ)   = (1/G) Σ_i min(s_i·Â_i, clip(s_i, 1 − ε_low, 1 + ε_high)·Â_i)
 *
 * with an episode as the sequence y_i: every minibatch the learner gets must be −J over its own
 * episodes, each ratio over all of its episode's steps. The learner here is a stub that evaluates
 * the train graph's GSPO loss on what it is fed (the graph itself is checked against ORT and
 * finite differences in src/runtime/ort).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor, type AlgoConfig } from '../algos/config.ts';
import type { Feed, Learner } from '../engine/types.ts';
import { Rng } from '../util/rng.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import { aggregationWeightsOf } from './batchAdvantages.ts';
import type { RolloutBatch } from './batch.ts';
import { episodeMinibatches, wholeEpisodes } from './rowFeed.ts';
import { runUpdate } from './update.ts';

/** Packed rows of a grid batch, as the tests below build them (D = 1). */
interface StepRows {
  S: number;
  D: number;
  obs: Float32Array;
  actions: Int32Array;
  mu: Float32Array;
  values: Float32Array;
  versions: Int32Array;
  /** [S] each row's episode (rows in episode order). */
  episode: Int32Array;
}

/** The rollout batch of those rows (one sequence per episode, packed). */
function toBatch(rows: StepRows, lengths: readonly number[], horizon: number): RolloutBatch {
  const n = lengths.length;
  const starts = new Int32Array(n);
  lengths.reduce((o, T, e) => ((starts[e] = o), o + T), 0);
  return {
    n, starts, lengths: Int32Array.from(lengths), size: rows.S, mask: new Float32Array(rows.S).fill(1), mu: rows.mu, versions: rows.versions, values: rows.values,
    turnEnd: new Uint8Array(rows.S).fill(1), bootstrap: new Float64Array(n), terminated: new Uint8Array(n).fill(1), groups: new Int32Array(n).fill(-1), horizon,
    rewards: new Float64Array(rows.S), scores: new Float64Array(n), stepCounts: new Int32Array(n), termScores: {},
    feed: { kind: 'rows', D: rows.D, obs: rows.obs, actions: rows.actions },
  };
}
function lengthsOf(rows: StepRows): number[] {
  const out: number[] = [];
  rows.episode.forEach((e) => (out[e] = (out[e] ?? 0) + 1));
  return out;
}
/** Aggregation weights of episodes of these lengths (time limit `horizon`). */
function stepWeights(eps: readonly StepEpisode[], algo: Pick<AlgoConfig, 'aggregation' | 'aggregationLen'>, horizon: number): Float64Array {
  const lengths = eps.map((e) => e.actions.length);
  const S = lengths.reduce((a, b) => a + b, 0);
  const episode = new Int32Array(S);
  lengths.reduce((o, T, e) => (episode.fill(e, o, o + T), o + T), 0);
  const rows: StepRows = { S, D: 1, obs: new Float32Array(S), actions: new Int32Array(S), mu: new Float32Array(S), values: new Float32Array(S), versions: new Int32Array(S), episode };
  return aggregationWeightsOf(toBatch(rows, lengths, horizon), algo);
}
/** The update phase on those rows (no reference, no critic). */
function runStepUpdate(learner: Learner, algo: AlgoConfig, rows: StepRows, t: { oldLogp: Float32Array; advantages: Float64Array; weights: Float64Array; returns: Float64Array }, opts: { rng: Rng; version: number }) {
  const b = toBatch(rows, lengthsOf(rows), 100);
  return runUpdate(learner, algo, b, { oldLogp: t.oldLogp, advantages: t.advantages, weights: t.weights, refLogp: null }, opts.rng, { logprobs: rows.mu, mask: new Float32Array(rows.S) });
}

/** A learner that records every feed (copied) and applies nothing. */
function recordingLearner(batch: number): Learner & { feeds: Record<string, Float32Array | Int32Array>[] } {
  const feeds: Record<string, Float32Array | Int32Array>[] = [];
  return {
    batch,
    hyper: {},
    feeds,
    async step(b: Readonly<Record<string, Feed>>) {
      const copy: Record<string, Float32Array | Int32Array> = {};
      for (const [k, v] of Object.entries(b)) copy[k] = (v as Float32Array | Int32Array).slice();
      feeds.push(copy);
      return { metrics: {}, applied: true, logprobs: new Float32Array(batch) };
    },
    async getWeights() {
      return {};
    },
    setWeights() {},
    async release() {},
  };
}

/** A batch of episodes of the given lengths, D = 1: row r's observation is r (it names the row). */
function batchOf(lengths: readonly number[], seed: number) {
  const rng = new Rng(seed);
  const S = lengths.reduce((a, b) => a + b, 0);
  const episode = new Int32Array(S);
  let o = 0;
  lengths.forEach((T, e) => {
    episode.fill(e, o, o + T);
    o += T;
  });
  const rows: StepRows = {
    S, D: 1,
    obs: Float32Array.from({ length: S }, (_, r) => r),
    actions: new Int32Array(S), mu: new Float32Array(S), values: new Float32Array(S), versions: new Int32Array(S), episode,
  };
  // π_θ's log-prob of each row's action (fixed: the stub learner applies nothing) and π_old's.
  const lp = Float64Array.from({ length: S }, () => -1.5 + 0.5 * rng.normal());
  const epShift = lengths.map(() => 0.3 * rng.normal());
  const oldLogp = Float32Array.from(lp, (x, r) => x + epShift[episode[r]] + 0.05 * rng.normal());
  const epAdv = lengths.map(() => rng.normal());
  const advantages = Float64Array.from({ length: S }, (_, r) => epAdv[episode[r]]);
  return { rows, lp, oldLogp, advantages, epAdv };
}

/** GSPO's sequence ratio of each episode over all its steps (the paper's s_i), float64. */
function paperRatios(lengths: readonly number[], lp: Float64Array, oldLogp: Float32Array): number[] {
  let o = 0;
  return lengths.map((T) => {
    let sum = 0;
    for (let t = 0; t < T; t++) sum += lp[o + t] - oldLogp[o + t];
    o += T;
    return Math.exp(sum / T);
  });
}

/** The train graph's GSPO pg loss on one feed (trainStep.ts: sequences by seq_ids, mean over mask). */
function graphGspoLoss(f: Record<string, Float32Array | Int32Array>, lpOfRow: (r: number) => number, clip: { low: number; high: number }): number {
  const B = f.mask.length;
  const sum = new Map<number, number>();
  const cnt = new Map<number, number>();
  for (let j = 0; j < B; j++) {
    if (!f.mask[j]) continue;
    const id = f.seq_ids[j];
    sum.set(id, (sum.get(id) ?? 0) + lpOfRow(f.obs[j]) - f.old_logprobs[j]);
    cnt.set(id, (cnt.get(id) ?? 0) + 1);
  }
  let loss = 0;
  for (let j = 0; j < B; j++) {
    if (!f.mask[j]) continue;
    const s = Math.exp(sum.get(f.seq_ids[j])! / cnt.get(f.seq_ids[j])!);
    const a = f.advantages[j];
    loss += f.weights[j] * -Math.min(s * a, Math.min(Math.max(s, 1 - clip.low), 1 + clip.high) * a);
  }
  return loss;
}

const stepEp = (T: number) => ({ actions: new Int32Array(T) }) as StepEpisode;

describe('GSPO on grids: whole episodes per minibatch', () => {
  const lengths = [3, 7, 2, 5, 4, 6, 1, 8, 5, 3];
  const n = lengths.length;
  const S = lengths.reduce((a, b) => a + b, 0);

  it("GSPO's default aggregation weighs each sequence 1/G (the paper's objective), and GSPO takes whole episodes", () => {
    const algo = defaultsFor('gspo');
    expect(algo.aggregation).toBe('sequence');
    expect(wholeEpisodes(algo)).toBe(true);
    expect(wholeEpisodes(defaultsFor('grpo'))).toBe(false);
    expect(wholeEpisodes({ ...defaultsFor('grpo'), aggregation: 'sequence' })).toBe(true);
    // Each episode's steps sum to 1/n: the sequence-mean, then the mean over sequences.
    const w = stepWeights(lengths.map(stepEp), algo, 100);
    let o = 0;
    for (const T of lengths) {
      expect(w.subarray(o, o + T).reduce((a, b) => a + b, 0)).toBeCloseTo(1 / n, 12);
      o += T;
    }
  });

  for (const [B, minibatches] of [[64, 1], [12, 1], [16, 3]] as const) {
    it(`every minibatch is −J over its own episodes, each ratio over the whole episode (B ${B}, minibatches ${minibatches})`, async () => {
      const clip = { low: 0.05, high: 0.08 };
      const algo: AlgoConfig = { ...defaultsFor('gspo'), clipLow: clip.low, clipHigh: clip.high, minibatches, updateEpochs: 2 };
      const { rows, lp, oldLogp, advantages, epAdv } = batchOf(lengths, B + minibatches);
      const weights = stepWeights(lengths.map(stepEp), algo, 100);
      const learner = recordingLearner(B);
      await runStepUpdate(learner, algo, rows, { oldLogp, advantages, weights, returns: new Float64Array(S) }, { rng: new Rng(5), version: 0 });
      const s = paperRatios(lengths, lp, oldLogp);
      const J = (eps: number[]) => eps.reduce((acc, i) => acc + Math.min(s[i] * epAdv[i], Math.min(Math.max(s[i], 1 - clip.low), 1 + clip.high) * epAdv[i]), 0) / eps.length;
      const chunks = Math.max(minibatches, Math.ceil(S / B));
      expect(learner.feeds.length).toBeGreaterThanOrEqual(2 * chunks);
      const seen = new Map<number, number>();
      for (const f of learner.feeds) {
        const eps = new Set<number>();
        let rowsFed = 0;
        for (let j = 0; j < B; j++) {
          if (!f.mask[j]) continue;
          rowsFed++;
          const r = f.obs[j];
          eps.add(rows.episode[r]);
          seen.set(r, (seen.get(r) ?? 0) + 1);
          // The graph groups exactly one episode's rows under one id.
          for (let k = 0; k < B; k++) if (f.mask[k] && f.seq_ids[k] === f.seq_ids[j]) expect(rows.episode[f.obs[k]]).toBe(rows.episode[r]);
        }
        // Whole episodes only.
        expect(rowsFed).toBe([...eps].reduce((a, e) => a + lengths[e], 0));
        expect(rowsFed).toBeLessThanOrEqual(B);
        expect(graphGspoLoss(f, (r) => lp[r], clip)).toBeCloseTo(-J([...eps]), 5);
      }
      // Each epoch trains every row once.
      for (let r = 0; r < S; r++) expect(seen.get(r)).toBe(2);
      if (B >= S && minibatches === 1) expect(graphGspoLoss(learner.feeds[0], (r) => lp[r], clip)).toBeCloseTo(-J(lengths.map((_, i) => i)), 5);
    });
  }

  it('an episode longer than the learner batch is refused for GSPO (its ratio needs all of it)', async () => {
    const algo = defaultsFor('gspo');
    const { rows, oldLogp, advantages } = batchOf([3, 9, 2], 1);
    const weights = stepWeights([3, 9, 2].map(stepEp), algo, 100);
    await expect(runStepUpdate(recordingLearner(8), algo, rows, { oldLogp, advantages, weights, returns: new Float64Array(14) }, { rng: new Rng(1), version: 0 })).rejects.toThrow(/does not fit one train step of 8 rows/);
  });
});

describe('episodeMinibatches', () => {
  const lengths = [5, 1, 9, 3, 3, 7, 2, 4, 6, 2];
  const starts: number[] = [];
  lengths.reduce((o, T) => (starts.push(o), o + T), 0);
  const S = lengths.reduce((a, b) => a + b, 0);

  it('whole episodes in the given order, each row once, ≤ B rows, about `chunks` balanced minibatches', () => {
    const order = new Rng(3).shuffle(lengths.map((_, i) => i));
    for (const [chunks, B] of [[1, 64], [3, 64], [4, 16], [2, 12]]) {
      const mbs = episodeMinibatches(order, starts, lengths, chunks, B, false);
      expect(mbs.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: S }, (_, r) => r));
      // Concatenated, they are the episodes in `order`, each one's rows in sequence.
      expect(mbs.flat()).toEqual(order.flatMap((e) => Array.from({ length: lengths[e] }, (_, t) => starts[e] + t)));
      for (const mb of mbs) expect(mb.length).toBeLessThanOrEqual(B);
      if (B >= S) expect(mbs.length).toBe(chunks);
      else expect(mbs.length).toBeGreaterThanOrEqual(chunks);
    }
    // Balanced: 3 chunks of 42 rows.
    expect(episodeMinibatches(order, starts, lengths, 3, 64, false).map((m) => m.length).every((x) => Math.abs(x - S / 3) <= 9)).toBe(true);
  });

  it('an episode longer than B: an error, or (split) pieces of ≤ B consecutive rows', () => {
    const order = lengths.map((_, i) => i);
    expect(() => episodeMinibatches(order, starts, lengths, 2, 8, false)).toThrow(/an episode of 9 steps/);
    const mbs = episodeMinibatches(order, starts, lengths, 2, 8, true);
    expect(mbs.flat()).toEqual(Array.from({ length: S }, (_, r) => r));
    expect(mbs).toContainEqual([6, 7, 8, 9, 10, 11, 12, 13]);
    expect(mbs).toContainEqual([14]);
    for (const mb of mbs) expect(mb.length).toBeLessThanOrEqual(8);
  });
});

describe('the other algorithms keep row-by-row minibatches', () => {
  it('GRPO: each epoch shuffles the rows and cuts them into equal slices, weights × S / rows', async () => {
    const lengths = [4, 6, 3, 7, 5, 5];
    const S = 30;
    const algo: AlgoConfig = { ...defaultsFor('grpo'), minibatches: 3, updateEpochs: 2 };
    const { rows, oldLogp, advantages } = batchOf(lengths, 2);
    const weights = stepWeights(lengths.map(stepEp), algo, 100);
    const learner = recordingLearner(16);
    await runStepUpdate(learner, algo, rows, { oldLogp, advantages, weights, returns: new Float64Array(S) }, { rng: new Rng(9), version: 0 });
    const rng = new Rng(9);
    const order = Array.from({ length: S }, (_, i) => i);
    const want: number[][] = [];
    for (let e = 0; e < 2; e++) {
      rng.shuffle(order);
      for (let c = 0; c < 3; c++) want.push(order.slice(c * 10, (c + 1) * 10));
    }
    expect(learner.feeds.map((f) => Array.from(f.obs.subarray(0, 10)))).toEqual(want);
    for (const f of learner.feeds) expect(f.weights[0]).toBeCloseTo((1 / S) * 3, 7);
    expect(learner.feeds[0].seq_ids).toBeUndefined();
  });
});
