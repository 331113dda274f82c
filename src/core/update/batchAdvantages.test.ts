/**
 * The phases over a rollout batch (advantages, weights, off-policy correction, reference scoring)
 * against hand-worked grid batches (packed rows) and padded token rows; update/sequencePhases.test.ts
 * has whole token batches.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../algos/config.ts';
import { EMA_BASELINE_INIT } from '../algos/advantages.ts';
import type { PolicyRunner } from '../engine/types.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import { stepStateKeys } from '../rollout/stepEpisode.ts';
import { actionIndex, aggregationWeightsOf, computeAdvantages, klRewardPenalty } from './batchAdvantages.ts';
import { broadcast, paddedLayout, type RolloutBatch } from './batch.ts';
import { placeRewards } from './positionRewards.ts';
import { isRatios, offPolicyWeights, RowScorer } from './offPolicy.ts';

/** An episode of T steps with the given values (the fields these phases read). */
function ep(T: number, over: Partial<StepEpisode> = {}): StepEpisode {
  return {
    envId: 'x', seed: 0, group: -1,
    images: new Uint8Array(0), directions: new Uint8Array(T), actions: new Int32Array(T), logprobs: new Float32Array(T),
    entropies: new Float32Array(T), values: new Float32Array(T), bootstrapValue: 0, rewards: new Float64Array(T), infos: [],
    versions: new Int32Array(T), terminated: true, truncated: false, success: false, ...over,
  };
}
const shapedOf = (perStep: number[]): ShapedReward => ({ total: perStep.reduce((a, b) => a + b, 0), perStep: Float64Array.from(perStep), terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'] });

/** A runner whose log-prob of action a for observation row j is −(obs[j·D] + a). */
function fakeRunner(batch: number, D: number, A: number): PolicyRunner & { calls: number } {
  return {
    batch, version: 0, calls: 0,
    setWeights() {},
    async run(inputs) {
      this.calls++;
      const obs = inputs.obs as Float32Array;
      const logprobs = new Float32Array(batch * A);
      for (let j = 0; j < batch; j++) for (let a = 0; a < A; a++) logprobs[j * A + a] = -(obs[j * D] + a);
      return { logprobs };
    },
    async release() {},
  };
}
/** A batch of one-position-per-row sequences of the given lengths (D = 1: row r's observation obs0[r]). */
function rowsOf(obs0: number[], actions: number[], mu: number[], versions: number[], lengths: number[] = [obs0.length], horizon = 10): RolloutBatch {
  const S = obs0.length;
  const starts = new Int32Array(lengths.length);
  lengths.reduce((o, T, e) => ((starts[e] = o), o + T), 0);
  return {
    n: lengths.length, starts, lengths: Int32Array.from(lengths), size: S, mask: new Float32Array(S).fill(1), mu: Float32Array.from(mu),
    versions: Int32Array.from(versions), values: new Float32Array(S), turnEnd: new Uint8Array(S).fill(1), bootstrap: new Float64Array(lengths.length),
    terminated: new Uint8Array(lengths.length).fill(1), groups: new Int32Array(lengths.length).fill(-1), horizon,
    rewards: new Float64Array(S), scores: new Float64Array(lengths.length), stepCounts: new Int32Array(lengths.length), termScores: {},
    feed: { kind: 'rows', D: 1, obs: Float32Array.from(obs0), actions: Int32Array.from(actions) },
  };
}
/** The batch of episodes `eps` (their values and lengths; observations unused). */
const batchOf = (eps: StepEpisode[], horizon = 10): RolloutBatch => {
  const lengths = eps.map((e) => e.actions.length);
  const S = lengths.reduce((a, b) => a + b, 0);
  const b = rowsOf(new Array<number>(S).fill(0), new Array<number>(S).fill(0), new Array<number>(S).fill(0), new Array<number>(S).fill(0), lengths, horizon);
  let o = 0;
  for (const e of eps) {
    b.values.set(e.values, o);
    o += e.actions.length;
  }
  return b;
};
const ctx = { groupSize: 2 };

describe('computeAdvantages on grid batches', () => {
  it('GRPO: each episode advantage (r − mean)/(std + eps) on all its steps', () => {
    const algo = { ...defaultsFor('grpo'), groupSize: 2 };
    const eps = [ep(2), ep(1)];
    const r = computeAdvantages(algo, placeRewards(batchOf(eps), [shapedOf([0, 1]), shapedOf([0])]), EMA_BASELINE_INIT, ctx);
    const a = 0.5 / (Math.SQRT1_2 + algo.stdEps);
    expect(Array.from(r.episodeAdv).map((x) => +x.toFixed(9))).toEqual([+a.toFixed(9), +(-a).toFixed(9)]);
    expect(r.adv[0]).toBe(r.episodeAdv[0]);
    expect(r.adv[1]).toBe(r.episodeAdv[0]);
    expect(r.adv[2]).toBe(r.episodeAdv[1]);
    expect(r.returns).toBeNull();
  });
  it('ReMax: reward minus its group greedy reward, on all its steps; refuses to run without the greedy rewards', () => {
    const algo = { ...defaultsFor('remax'), groupSize: 2 };
    const eps = [ep(2), ep(1), ep(1), ep(3)];
    const shaped = [shapedOf([0, 1]), shapedOf([0]), shapedOf([0.5]), shapedOf([0, 0, 0])];
    // Group 0 greedy 0.25: 1 → +0.75, 0 → −0.25. Group 1 greedy 0.5: 0.5 → 0, 0 → −0.5.
    const r = computeAdvantages(algo, placeRewards(batchOf(eps), shaped), EMA_BASELINE_INIT, { ...ctx, greedyTotals: Float64Array.from([0.25, 0.5]) });
    expect(Array.from(r.episodeAdv)).toEqual([0.75, -0.25, 0, -0.5]);
    expect(Array.from(r.adv)).toEqual([0.75, 0.75, -0.25, 0, -0.5, -0.5, -0.5]);
    expect(() => computeAdvantages(algo, placeRewards(batchOf(eps), shaped), EMA_BASELINE_INIT, ctx)).toThrow(/greedy/);
  });
  it('PPO: GAE per episode on the shaped per-step rewards; episode advantage = first step', () => {
    const algo = { ...defaultsFor('ppo'), gamma: 0.5, lambda: 1, normalizeAdvantages: false };
    const e = ep(2, { values: Float32Array.from([0.5, 0.25]) });
    const r = computeAdvantages(algo, placeRewards(batchOf([e]), [shapedOf([0, 1])]), EMA_BASELINE_INIT, ctx);
    // A_1 = 1 − 0.25 = 0.75; A_0 = 0 + 0.5·0.25 − 0.5 + 0.5·0.75 = 0
    expect(Array.from(r.adv)).toEqual([0, 0.75]);
    expect(Array.from(r.returns!)).toEqual([0.5, 1]);
    expect(r.episodeAdv[0]).toBe(0);
  });
});

describe('aggregationWeightsOf on grid batches', () => {
  const eps = [ep(1), ep(3)];
  it('token: 1/S per row; sequence: 1/(T·n); constant: 1/(n·L), L = aggregationLen or the time limit', () => {
    expect(Array.from(aggregationWeightsOf(batchOf(eps), { aggregation: 'token', aggregationLen: null }))).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(Array.from(aggregationWeightsOf(batchOf(eps), { aggregation: 'sequence', aggregationLen: null }))).toEqual([0.5, 1 / 6, 1 / 6, 1 / 6]);
    expect(Array.from(aggregationWeightsOf(batchOf(eps), { aggregation: 'constant', aggregationLen: null }))).toEqual([0.05, 0.05, 0.05, 0.05]);
    expect(Array.from(aggregationWeightsOf(batchOf(eps), { aggregation: 'constant', aggregationLen: 4 }))).toEqual([0.125, 0.125, 0.125, 0.125]);
  });
});

describe('padded token rows', () => {
  // n = 2, T = 4. Seq 0: [env, pol, pol, pol] (3 policy tokens). Seq 1: [env, pol, pad, pad] (1).
  const rows = paddedLayout(2, 4, Float32Array.from([0, 1, 1, 1, 0, 1, 0, 0]));
  const weights = (aggregation: 'token' | 'sequence' | 'constant', aggregationLen: number | null = null) => Array.from(aggregationWeightsOf(rows, { aggregation, aggregationLen }));

  it('broadcasts sequence advantages to policy tokens only', () => {
    expect(Array.from(broadcast(rows, [0.5, -2]))).toEqual([0, 0.5, 0.5, 0.5, 0, -2, 0, 0]);
  });

  it("'token': 1/total = 1/4 on every policy token; 'sequence': 1/(len · n) = 1/6 for seq 0, 1/2 for seq 1", () => {
    expect(weights('token')).toEqual([0, 0.25, 0.25, 0.25, 0, 0.25, 0, 0]);
    expect(weights('sequence')).toEqual([0, 1 / 6, 1 / 6, 1 / 6, 0, 0.5, 0, 0]);
  });

  it("'constant' (Dr.GRPO): 1/(n·L), default L = T = 4 -> 1/8; L = 10 -> 1/20", () => {
    expect(weights('constant')).toEqual([0, 0.125, 0.125, 0.125, 0, 0.125, 0, 0]);
    expect(weights('constant', 10)).toEqual([0, 0.05, 0.05, 0.05, 0, 0.05, 0, 0]);
  });

  it("'sequence' leaves sequences without a policy token out of n; no policy token at all gives zeros", () => {
    expect(Array.from(aggregationWeightsOf(paddedLayout(2, 2, Float32Array.from([1, 1, 0, 0])), { aggregation: 'sequence', aggregationLen: null }))).toEqual([0.5, 0.5, 0, 0]);
    expect(Array.from(aggregationWeightsOf(paddedLayout(1, 2, Float32Array.from([0, 0])), { aggregation: 'token', aggregationLen: null }))).toEqual([0, 0]);
    expect(() => paddedLayout(2, 3, Float32Array.from([1, 1, 1]))).toThrow(/expected n·T = 2·3/);
  });

  it('actionIndex maps multi-token actions to their step and leaves env tokens at −1', () => {
    // [env, a0, a0 (ends turn 0), env, a1, a1 (ends turn 1)]: step values [0.3, −1] land as [0, 0.3, 0.3, 0, −1, −1].
    const b = { ...paddedLayout(1, 6, Float32Array.from([0, 1, 1, 0, 1, 1])), turnEnd: Uint8Array.from([0, 0, 1, 0, 0, 1]) };
    const { index, actions } = actionIndex(b);
    expect(Array.from(index)).toEqual([-1, 0, 0, -1, 1, 1]);
    expect(Array.from(actions)).toEqual([2]);
    const stepValues = [0.3, -1];
    expect(Array.from(index, (k) => (k < 0 ? 0 : stepValues[k]))).toEqual([0, 0.3, 0.3, 0, -1, -1]);
  });
});

describe('RowScorer and klRewardPenalty', () => {
  it('scores the listed rows in calls of the runner batch; the KL lands on each step', async () => {
    const runner = fakeRunner(2, 1, 3);
    const rows = rowsOf([0, 1, 2], [0, 1, 2], [-1, -1, -1], [0, 0, 0]);
    const lp = await new RowScorer(runner, 3).logprobsAt(rows);
    expect(Array.from(lp)).toEqual([-0, -2, -4]);
    expect(runner.calls).toBe(2);
    const b = placeRewards(rowsOf([0, 1, 2], [0, 1, 2], [-1, -1, -1], [0, 0, 0], [2, 1]), [shapedOf([0, 0]), shapedOf([1])]);
    klRewardPenalty(b, lp, { klCoef: 0.5, klEstimator: 'k1' });
    // k1 = μ − π_ref: −1 − 0 = −1, −1 + 2 = 1, −1 + 4 = 3
    expect(Array.from(b.rewards)).toEqual([0.5, -0.5, 1 - 1.5]);
    expect(b.scores[0]).toBe(0);
    expect(b.scores[1]).toBe(1 - 1.5);
  });
});

describe('offPolicyWeights on grid batches', () => {
  const rows = rowsOf([0, 1, 2], [0, 0, 0], [-0.5, -0.5, -3], [2, 1, 1]);
  const adv = Float64Array.from([1, 1, 1]);
  it('fresh rows keep μ; stale rows get π_old from the proximal policy and, with TIS, min(π_old/μ, cap) on their advantage', async () => {
    const r = await offPolicyWeights({ tis: { enabled: true, cap: 2 } }, 2, rows, adv, new RowScorer(fakeRunner(4, 1, 1), 1));
    expect(r.staleCount).toBe(2);
    expect(Array.from(r.fresh)).toEqual([1, 0, 0]);
    expect(Array.from(r.oldLogp)).toEqual([-0.5, -1, -2]);
    // row 1: exp(−1 + 0.5) ≈ 0.607; row 2: exp(−2 + 3) = e, capped at 2
    expect(r.advUsed[0]).toBe(1);
    expect(r.advUsed[1]).toBeCloseTo(Math.exp(-0.5), 6);
    expect(r.advUsed[2]).toBe(2);
  });
  it('without TIS stale rows keep μ as π_old and their advantage, and the ratios are still reported', async () => {
    const r = await offPolicyWeights({ tis: { enabled: false, cap: 2 } }, 2, rows, adv, new RowScorer(fakeRunner(4, 1, 1), 1));
    expect(Array.from(r.oldLogp)).toEqual([-0.5, -0.5, -3]);
    expect(Array.from(r.advUsed)).toEqual([1, 1, 1]);
    expect(isRatios(rows, r, new Float32Array(3), 2).ratioMax).toBeCloseTo(Math.E, 5);
  });
});

describe('stepStateKeys (GiGPO anchor states)', () => {
  it('equal heading and view give equal keys; either differing gives another', () => {
    // Three steps with 3-byte views: steps 0 and 2 see the same view with the same heading.
    const ep = { images: Uint8Array.from([1, 2, 3, 1, 2, 4, 1, 2, 3]), directions: Uint8Array.from([0, 0, 0]) };
    const k = stepStateKeys(ep);
    expect(k[0]).toBe(k[2]);
    expect(k[0]).not.toBe(k[1]);
    expect(stepStateKeys({ images: ep.images, directions: Uint8Array.from([0, 0, 1]) })[2]).not.toBe(k[0]);
  });
});
