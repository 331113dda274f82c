/**
 * The token trainers' shared phases (versions in training layout, advantages, weights,
 * off-policy correction, metrics) against hand-worked batches.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../algos/config.ts';
import { EMA_BASELINE_INIT } from '../algos/advantages.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { shiftedBatch, tokenRolloutBatch } from './batch.ts';
import { placeRewards } from './positionRewards.ts';
import { aggregationWeightsOf, computeAdvantages, valueTargets } from './batchAdvantages.ts';
import { batchMetrics } from '../metrics/batchMetrics.ts';
import { learnerIsProximal, offPolicyWeights, type OffPolicy, type PositionScorer } from './offPolicy.ts';
import { runUpdate } from './update.ts';
import { sampledTokenEpisode } from '../rollout/tokenEpisode.ts';
import type { Feed, Learner } from '../engine/types.ts';
import { Rng } from '../util/rng.ts';

/** context: <bos> <obs> a <eoa>: two policy tokens at context 2, 3 (training positions 1, 2). */
function ep(over: Partial<TokenEpisode> = {}): TokenEpisode {
  return {
    envId: 'x', seed: 0, group: 0,
    tokens: Int32Array.from([1, 3, 7, 2]), lossMask: Uint8Array.from([0, 0, 1, 1]), logprobs: Float32Array.from([0, 0, -1, -2]),
    entropies: Float32Array.from([0, 0, 1, 3]), versions: Int32Array.from([-1, -1, 0, 1]),
    rewards: Float64Array.from([1]), infos: [{ success: true }], actions: ['a'], observations: ['t', 'r'],
    forcedEnds: 0, turns: 1, terminated: true, truncated: false, contextLimited: false, success: true, transcript: '', ...over,
  };
}
const shapedOf = (perStep: number[]): ShapedReward => ({ total: perStep.reduce((a, b) => a + b, 0), perStep: Float64Array.from(perStep), terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'] });
const T = 5;

describe('tokenRolloutBatch', () => {
  it('position t holds the version of tokens[t+1] (−1 elsewhere); the last policy token ends the turn', () => {
    const b = tokenRolloutBatch([ep()], T, 8);
    expect(Array.from(b.versions)).toEqual([-1, 0, 1, -1, -1]);
    expect(Array.from(b.turnEnd)).toEqual([0, 0, 1, 0, 0]);
    expect(Array.from(b.starts)).toEqual([0]);
    expect(Array.from(b.lengths)).toEqual([T]);
  });
});

describe('computeAdvantages and aggregationWeightsOf on token batches', () => {
  const eps = [ep(), ep({ success: false })];
  const batch = tokenRolloutBatch(eps, T, 8);
  it('GRPO: one advantage per episode, on its policy positions only', () => {
    const algo = { ...defaultsFor('grpo'), groupSize: 2 };
    const r = computeAdvantages(algo, placeRewards(batch, [shapedOf([1]), shapedOf([0])]), EMA_BASELINE_INIT, { groupSize: 2 });
    const a = r.episodeAdv[0];
    expect(a).toBeGreaterThan(0);
    expect(r.episodeAdv[1]).toBeCloseTo(-a, 12);
    expect(Array.from(r.adv)).toEqual([0, a, a, 0, 0, 0, -a, -a, 0, 0]);
    expect(r.returns).toBeNull();
    expect(valueTargets(batch, r.returns, 0.2)).toBeUndefined();
  });
  it('PPO: token GAE, returns and the rollout V at the shifted positions', () => {
    const algo = { ...defaultsFor('ppo'), gamma: 1, lambda: 1, normalizeAdvantages: false };
    const values = Float32Array.from([0, 0, 0.5, 0.25]);
    const e = ep({ values });
    const b1 = tokenRolloutBatch([e], T, 8);
    const r = computeAdvantages(algo, placeRewards(b1, [shapedOf([1])]), EMA_BASELINE_INIT, { groupSize: 1 });
    // one action of two tokens, reward 1 on its last, terminated: A = 1 − V per token
    expect(Array.from(r.adv)).toEqual([0, 0.5, 0.75, 0, 0]);
    expect(Array.from(r.returns!)).toEqual([0, 1, 1, 0, 0]);
    expect(Array.from(b1.values)).toEqual([0, 0.5, 0.25, 0, 0]);
    expect(r.episodeAdv[0]).toBe(0.5);
    expect(Object.keys(valueTargets(b1, r.returns, 0.2)!)).toEqual(['returns', 'old_values']);
    expect(Object.keys(valueTargets(b1, r.returns, null)!)).toEqual(['returns']);
  });
  it('weights: token aggregation over the 4 policy positions; empty batch → empty', () => {
    expect(Array.from(aggregationWeightsOf(batch, { aggregation: 'token', aggregationLen: null }))).toEqual([0, 0.25, 0.25, 0, 0, 0, 0.25, 0.25, 0, 0]);
    expect(aggregationWeightsOf(tokenRolloutBatch([], T, 8), { aggregation: 'token', aggregationLen: null }).length).toBe(0);
  });
});

describe('offPolicyWeights on token batches', () => {
  const e = ep();
  const b = tokenRolloutBatch([e], T, 8);
  const adv = Float64Array.from([0, 1, 1, 0, 0]);
  it('learner as proximal (no scorer): fresh = version-V tokens, prox_mask on the stale ones, μ as π_old', async () => {
    const r = await offPolicyWeights({ tis: { enabled: true, cap: 2 } }, 1, b, adv, 'learner');
    expect(Array.from(r.fresh)).toEqual([0, 0, 1, 0, 0]);
    expect(Array.from(r.extra!.prox_mask)).toEqual([0, 1, 0, 0, 0]);
    expect(Array.from(r.oldLogp)).toEqual(Array.from(b.mu));
    expect(r.stale.max).toBe(1);
  });
  it('with a scorer and TIS: stale tokens take its log-prob as π_old and min(π/μ, cap) on their advantage', async () => {
    const scorer = { logprobsAt: async () => Float32Array.from([0, -0.5, -9, 0, 0]) } as unknown as PositionScorer;
    const r = await offPolicyWeights({ tis: { enabled: true, cap: 1.5 } }, 1, b, adv, scorer);
    expect(Array.from(r.oldLogp)).toEqual([0, -0.5, -2, 0, 0]);
    expect(r.advUsed[1]).toBe(1.5); // exp(−0.5 + 1) ≈ 1.65, capped
    expect(r.advUsed[2]).toBe(1);
    expect(r.extra).toBeUndefined();
  });
});

describe('decoupled PPO: one proximal policy for the whole update', () => {
  // Hilton et al. (2022), AReaL: J = Σ_t min(r_t·A′_t, clip(r_t)·A′_t), r_t = π_θ/π_prox and
  // A′_t = A_t·min(π_prox/μ_t, cap), π_prox the weights before the update, fixed for every
  // minibatch and epoch.
  it('the learner serves as π_prox only when the update is one optimizer step', () => {
    const base = { tis: { enabled: true, cap: 2 }, updateEpochs: 1, minibatches: 1 };
    expect(learnerIsProximal(base, 16, 16)).toBe(true);
    expect(learnerIsProximal(base, 32, 16)).toBe(false); // flaky-api-async: 4 groups × 8, learnerBatch 16
    expect(learnerIsProximal({ ...base, minibatches: 2 }, 16, 16)).toBe(false);
    expect(learnerIsProximal({ ...base, updateEpochs: 2 }, 16, 16)).toBe(false);
    expect(learnerIsProximal({ ...base, tis: { enabled: false, cap: 2 } }, 16, 16)).toBe(false);
  });

  it('with a scorer: π_prox computed once before the update, the same in every minibatch and epoch', async () => {
    // Four sequences, two training positions each (versions 0 and 1); the learner is at version 1.
    const eps = [0, 1, 2, 3].map((k) => ep({ logprobs: Float32Array.from([0, 0, -1 - k / 10, -2 + k / 10]) }));
    const rows = shiftedBatch(eps, T);
    const batch = tokenRolloutBatch(eps, T, 8);
    const adv = Float64Array.from(rows.mask, (m, i) => (m ? 1 + Math.floor(i / T) : 0));
    const prox = Float32Array.from({ length: 4 * T }, (_, i) => -0.7 - 0.1 * (i % T) - 0.05 * Math.floor(i / T));
    let calls = 0;
    const scorer = { logprobsAt: async () => (calls++, prox.slice()) } as unknown as PositionScorer;
    const algo = { ...defaultsFor('grpo'), tis: { enabled: true, cap: 1.5 }, minibatches: 2, updateEpochs: 2 };
    expect(learnerIsProximal(algo, 4, 2)).toBe(false);
    const off = await offPolicyWeights(algo, 1, batch, adv, scorer);
    const feeds: Record<string, Float32Array>[] = [];
    const learner: Learner = {
      batch: 2, hyper: {},
      async step(b: Readonly<Record<string, Feed>>) {
        feeds.push(Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Float32Array.from(v as Float32Array)])));
        return { metrics: {}, applied: true, logprobs: new Float32Array(2 * T) };
      },
      async getWeights() { return {}; },
      setWeights() {},
      async release() {},
    };
    const w = aggregationWeightsOf(batch, algo);
    await runUpdate(learner, algo, batch, { oldLogp: off.oldLogp, advantages: off.advUsed, weights: w, refLogp: null, extra: off.extra }, new Rng(1), { logprobs: batch.mu, mask: off.fresh });
    expect(calls).toBe(1);
    expect(feeds.length).toBe(4); // 2 epochs × 2 minibatches
    const seen = new Map<number, number>();
    for (const f of feeds) {
      expect(f.prox_mask).toBeUndefined();
      for (let j = 0; j < 2; j++) {
        // Which sequence is in slot j: its advantage on the fresh position names it.
        const s = Math.round(f.advantages[j * T + 2]) - 1;
        seen.set(s, (seen.get(s) ?? 0) + 1);
        // Stale position 1 (sampled by version 0): π_old = π_prox, A′ = A·min(π_prox/μ, cap).
        const mu = rows.oldLogprobs[s * T + 1];
        expect(f.old_logprobs[j * T + 1]).toBe(prox[s * T + 1]);
        expect(f.advantages[j * T + 1]).toBeCloseTo((s + 1) * Math.min(Math.exp(prox[s * T + 1] - mu), 1.5), 6);
        // Fresh position 2 (version 1, the learner's): μ is π_prox, weight 1.
        expect(f.old_logprobs[j * T + 2]).toBe(rows.oldLogprobs[s * T + 2]);
      }
    }
    expect([...seen.entries()].sort()).toEqual([[0, 2], [1, 2], [2, 2], [3, 2]]);
  });
});

describe('batch metrics on a token batch', () => {
  it('rollout entropy is the mean over the sampled policy tokens; the extras count episodes', () => {
    const a = ep();
    const b = ep({ forcedEnds: 1, contextLimited: true, success: false, infos: [{ success: false }], entropies: Float32Array.from([0, 0, 2, 2]) });
    const batch = tokenRolloutBatch([a], T, 8);
    const off = { stale: { perToken: new Int32Array(T), mean: 0, max: 0 }, fresh: batch.mask, staleCount: 0 } as unknown as OffPolicy;
    const m = batchMetrics({
      sampled: [sampledTokenEpisode(a, shapedOf([1])), sampledTokenEpisode(b, shapedOf([0]))], batch, trainedSuccess: [true],
      adv: { adv: Float64Array.from([0, 2, 4, 0, 0]), returns: null, episodeAdv: Float64Array.from([3]), ema: EMA_BASELINE_INIT }, off,
      tis: { weights: new Float64Array(T), ratioMean: 1, ratioMax: 1, clipfrac: 0 },
      upd: { metrics: { 'actor/pg_loss': 0.5 }, steps: 3, allApplied: true, stepLogprobs: new Float32Array(T) }, lr: 0.1, version: 7,
    }) as Record<string, number>;
    expect(m['actor/rollout_entropy']).toBe(2);
    expect(m['adv/mean']).toBe(3);
    expect(m['episode/success_rate']).toBe(0.5);
    expect(m['episode/forced_end_ratio']).toBe(0.5);
    expect(m['episode/context_limited_ratio']).toBe(0.5);
    expect(m['episode/distinct_ratio']).toBe(0.5);
    expect(m['train/batch_success_rate']).toBe(1);
    expect(m['actor/pg_loss']).toBe(0.5);
    expect(m['actor/lr']).toBe(0.1);
    expect(m['train/updates']).toBe(3);
    expect(m['train/policy_version']).toBe(7);
    expect(m['train/batch_episodes']).toBe(1);
  });
});
