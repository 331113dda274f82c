/**
 * The one GAE (`sequenceGae`, and `stepGae`, its one-position-per-step case): hand-worked
 * episodes step by step, and over a token batch (PPO for token policies: `computeAdvantages` →
 * `sequenceGae`) against hand-worked numbers and against the textbook sum
 * A_t = Σ_l (γλ)^l δ_{t+l}, written out separately here, where the two must agree (one token per
 * action). A recursion with γ or λ alone in place of γλ, with γλ applied inside an action, or
 * bootstrapping a terminated episode fails these numbers.
 */
import { describe, expect, it } from 'vitest';
import { EMA_BASELINE_INIT } from './advantages.ts';
import { defaultsFor } from './config.ts';
import { sequenceGae, stepGae } from './gae.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { computeAdvantages } from '../update/batchAdvantages.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { placeRewards } from '../update/positionRewards.ts';

/** GAE of one token episode (context index i ↔ training position i − 1), in context indices. */
function tokenGae(ep: { lossMask: Uint8Array; values: Float32Array; terminated: boolean }, turnRewards: number[], gamma: number, lambda: number): { advantages: Float64Array; returns: Float64Array } {
  const L = ep.lossMask.length;
  const none = new Float32Array(L);
  const e: TokenEpisode = {
    envId: 'x', seed: 0, group: -1, tokens: new Int32Array(L), lossMask: ep.lossMask, logprobs: none, entropies: none, versions: new Int32Array(L), values: ep.values,
    rewards: Float64Array.from(turnRewards), infos: [], actions: [], observations: [], forcedEnds: 0, turns: turnRewards.length,
    terminated: ep.terminated, truncated: !ep.terminated, contextLimited: false, success: false, transcript: '',
  };
  const algo = { ...defaultsFor('ppo'), gamma, lambda, normalizeAdvantages: false };
  const shaped = { total: 0, perStep: Float64Array.from(turnRewards), terms: {}, raw: {} } as unknown as ShapedReward;
  const r = computeAdvantages(algo, placeRewards(tokenRolloutBatch([e], L, 8), [shaped]), EMA_BASELINE_INIT, { groupSize: 1 });
  const toContext = (a: ArrayLike<number>) => Float64Array.from({ length: L }, (_, i) => (i === 0 ? 0 : a[i - 1]));
  return { advantages: toContext(r.adv), returns: toContext(r.returns!) };
}

/**
 * Textbook GAE as the explicit sum (not the recursion the code uses): δ_t = r_t + γ·V_{t+1} − V_t
 * with V_T = bootstrap, A_t = Σ_{l ≥ 0} (γλ)^l δ_{t+l}, R_t = A_t + V_t.
 */
function gaeBySum(rewards: readonly number[], values: readonly number[], bootstrap: number, gamma: number, lambda: number): { advantages: number[]; returns: number[] } {
  const T = rewards.length;
  const delta = rewards.map((r, t) => r + gamma * (t + 1 < T ? values[t + 1] : bootstrap) - values[t]);
  const advantages = delta.map((_, t) => delta.slice(t).reduce((s, d, l) => s + (gamma * lambda) ** l * d, 0));
  return { advantages, returns: advantages.map((a, t) => a + values[t]) };
}

// Values are float32 (as the decoder returns them): agree to 1e-6.
const close = (a: ArrayLike<number>, b: ArrayLike<number>, digits = 6) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(a[i], `index ${i}`).toBeCloseTo(b[i], digits);
};

describe('GAE over steps (one position per step)', () => {
  // 3 steps, rewards [0, 0, 1], values [0.5, 0.6, 0.7], γ = 0.9, λ = 0.8, γλ = 0.72.
  const rewards = [0, 0, 1];
  const values = [0.5, 0.6, 0.7];

  it('terminated: no bootstrap past the last step', () => {
    // δ2 = 1 + 0 − 0.7 = 0.3;  δ1 = 0 + 0.9·0.7 − 0.6 = 0.03;  δ0 = 0 + 0.9·0.6 − 0.5 = 0.04.
    // A2 = 0.3;  A1 = 0.03 + 0.72·0.3 = 0.246;  A0 = 0.04 + 0.72·0.246 = 0.21712.
    // returns = A + V = [0.71712, 0.846, 1.0]. (γ alone in place of γλ gives A0 = 0.31, λ alone 0.256.)
    const r = stepGae(rewards, values, 0, 0.9, 0.8);
    close(r.advantages, [0.21712, 0.246, 0.3], 12);
    close(r.returns, [0.71712, 0.846, 1.0], 12);
  });

  it('truncated: bootstraps from V(s_T)', () => {
    // V(s3) = 0.5: δ2 = 1 + 0.9·0.5 − 0.7 = 0.75; A2 = 0.75; A1 = 0.03 + 0.72·0.75 = 0.57;
    // A0 = 0.04 + 0.72·0.57 = 0.4504. returns = [0.9504, 1.17, 1.45].
    const r = stepGae(rewards, values, 0.5, 0.9, 0.8);
    close(r.advantages, [0.4504, 0.57, 0.75], 12);
    close(r.returns, [0.9504, 1.17, 1.45], 12);
  });

  it('λ = 1 gives Monte Carlo returns; λ = 0 gives one-step TD errors', () => {
    // Discounted returns of [0, 0, 1] with γ = 0.9: [0.81, 0.9, 1].
    const mc = stepGae(rewards, values, 0, 0.9, 1);
    close(mc.returns, [0.81, 0.9, 1], 12);
    close(mc.advantages, [0.31, 0.3, 0.3], 12);
    const td = stepGae(rewards, values, 0, 0.9, 0);
    close(td.advantages, [0.04, 0.03, 0.3], 12);
  });

  it('agrees with the textbook sum on random episodes', () => {
    let x = 7;
    const rand = () => ((x = (x * 48271) % 2147483647) / 2147483647) * 2 - 1;
    for (const [gamma, lambda] of [[0.99, 0.95], [0.5, 0.3], [1, 1]]) {
      const rw = Array.from({ length: 9 }, rand);
      const v = Array.from({ length: 9 }, rand);
      const ref = gaeBySum(rw, v, 0.25, gamma, lambda);
      const r = stepGae(rw, v, 0.25, gamma, lambda);
      close(r.advantages, ref.advantages, 12);
      close(r.returns, ref.returns, 12);
    }
  });

  it('sequences side by side in one array do not leak into each other', () => {
    // Positions 0-2: the episode above (terminated); position 3: one step, r = 2, V = 1: δ = 1.
    const mask = new Uint8Array(4).fill(1);
    const adv = new Float64Array(4);
    const ret = new Float64Array(4);
    const all = { mask, turnEnd: mask, rewards: [...rewards, 2], values: [...values, 1] };
    sequenceGae({ ...all, start: 3, length: 1, bootstrap: 0 }, 0.9, 0.8, adv, ret);
    sequenceGae({ ...all, start: 0, length: 3, bootstrap: 0 }, 0.9, 0.8, adv, ret);
    close(adv, [0.21712, 0.246, 0.3, 1], 12);
  });

  it('refuses a non-finite bootstrap (a cut episode whose V(s_T) is unknown) and γ, λ outside [0, 1]', () => {
    expect(() => stepGae(rewards, values, NaN, 0.9, 0.8)).toThrow(/bootstrap/);
    expect(() => stepGae(rewards, values, 0, 1.1, 0.8)).toThrow(/gamma/);
    expect(() => stepGae(rewards, values, 0, 0.9, -0.1)).toThrow(/lambda/);
    expect(() => stepGae(rewards, [0.5], 0, 0.9, 0.8)).toThrow(/3 rewards vs 1 values/);
  });
});

describe('GAE over policy tokens', () => {
  it('matches a hand-worked two-turn episode (two tokens per action, env tokens skipped)', () => {
    // context: <bos> <obs> | a0 <eoa> | <obs> x | a1 <eoa>     reward 0 after turn 0, 1 after turn 1 (terminated)
    const lossMask = Uint8Array.from([0, 0, 1, 1, 0, 0, 1, 1]);
    const values = Float32Array.from([0, 0, 0.5, 0.625, 0, 0, 0.25, 0.375]);
    const r = tokenGae({ lossMask, values, terminated: true }, [0, 1], 0.9, 0.8);
    // Backwards, γ = λ = 1 inside an action, 0.9 / 0.8 across the turn boundary:
    //   k3 (pos 7, ends turn 1): δ = 1 + 0 − 0.375 = 0.625                         A = 0.625
    //   k2 (pos 6):              δ = 0 + 0.375 − 0.25 = 0.125                      A = 0.125 + 0.625 = 0.75
    //   k1 (pos 3, ends turn 0): δ = 0 + 0.9·0.25 − 0.625 = −0.4                   A = −0.4 + 0.72·0.75 = 0.14
    //   k0 (pos 2):              δ = 0 + 0.625 − 0.5 = 0.125                       A = 0.125 + 0.14 = 0.265
    close(r.advantages, [0, 0, 0.265, 0.14, 0, 0, 0.75, 0.625]);
    close(r.returns, [0, 0, 0.765, 0.765, 0, 0, 1, 1]);
  });

  it('equals step-level GAE when every action is one token', () => {
    // 4 turns, one token each, env tokens between; terminated and truncated endings.
    const lossMask = Uint8Array.from([0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1]);
    const stepValues = [0.3, -0.2, 0.7, 0.1];
    const values = new Float32Array(lossMask.length);
    const pos = [2, 5, 7, 11];
    pos.forEach((p, k) => (values[p] = stepValues[k]));
    const rewards = [0.5, 0, -1, 2];
    for (const terminated of [true, false]) {
      // The token batch bootstraps a cut episode from its last policy token's own V (0.1).
      const ref = gaeBySum(rewards, stepValues.map(Math.fround), terminated ? 0 : Math.fround(0.1), 0.97, 0.9);
      const r = tokenGae({ lossMask, values, terminated }, rewards, 0.97, 0.9);
      close(pos.map((p) => r.advantages[p]), ref.advantages);
      close(pos.map((p) => r.returns[p]), ref.returns);
    }
  });

  it('gives an action cut by the context no reward, and rejects a turn count that does not fit', () => {
    // Two complete actions (rewards 0, 0.5), then a half-written one at the end of the context.
    const lossMask = Uint8Array.from([0, 1, 1, 0, 1, 1, 0, 1]);
    const values = Float32Array.from([0, 0.1, 0.2, 0, 0.3, 0.4, 0, 0.6]);
    const r = tokenGae({ lossMask, values, terminated: false }, [0, 0.5], 1, 1);
    // λ = γ = 1: A_k = Σ rewards after k + bootstrap V(last) − V_k, bootstrap = 0.6 (its own V).
    close(r.advantages, [0, 0.5 + 0.6 - 0.1, 0.5 + 0.6 - 0.2, 0, 0.5 + 0.6 - 0.3, 0.5 + 0.6 - 0.4, 0, 0]);
    expect(() => tokenGae({ lossMask, values, terminated: false }, [0], 1, 1)).toThrow(/3 actions .* 1 turn rewards/);
    expect(() => tokenGae({ lossMask, values, terminated: true }, [0, 0.5], 1, 1)).toThrow(/turn rewards/);
  });
});
