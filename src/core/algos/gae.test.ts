/**
 * GAE over a token batch (PPO for token policies: `computeAdvantages` → algos/gae.ts
 * `sequenceGae`) against a hand-worked example and against the textbook step-level `gae` of
 * algos/advantages.ts where the two must agree (one token per action).
 */
import { describe, expect, it } from 'vitest';
import { EMA_BASELINE_INIT, gae } from './advantages.ts';
import { defaultsFor } from './config.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { computeAdvantages } from './batchAdvantages.ts';
import { tokenRolloutBatch } from '../update/batch.ts';

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
  const r = computeAdvantages(algo, tokenRolloutBatch([e], L, 8), [shaped], new Float64Array(1), EMA_BASELINE_INIT, { groupSize: 1 });
  const toContext = (a: ArrayLike<number>) => Float64Array.from({ length: L }, (_, i) => (i === 0 ? 0 : a[i - 1]));
  return { advantages: toContext(r.adv), returns: toContext(r.returns!) };
}

// Values are float32 (as the decoder returns them): agree to 1e-6.
const close = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i], 6);
};

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
      const ref = gae({ rewards, values: Float32Array.from(stepValues), terminated, truncated: !terminated, bootstrapValue: Math.fround(0.1) }, 0.97, 0.9);
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
