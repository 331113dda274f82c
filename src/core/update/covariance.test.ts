/**
 * Clip-Cov's and KL-Cov's token selection against a hand-worked covariance (Cui et al. 2025:
 * cov_i = (A_i − Ā)(log π_i − mean log π) over the policy tokens), and the update loop feeding it.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../algos/config.ts';
import type { Feed, Learner } from '../engine/types.ts';
import { Rng } from '../util/rng.ts';
import { packedRowsBatch } from './batch.ts';
import { aggregationWeightsOf } from './batchAdvantages.ts';
import { COVARIANCE_DEFAULTS } from '../algos/covarianceConfig.ts';
import { covarianceSelection, tokenCovariance } from './covariance.ts';
import { runUpdate } from './update.ts';

// Four policy tokens and one masked-out token with extreme values (it must change nothing).
const adv = [3, 2, 1, 2, 100];
const logp = [-1, -3, -1, -1, 0];
const mask = [1, 1, 1, 1, 0];

describe('covariance selection', () => {
  it('cov by hand: Ā = 2, mean log π = −1.5 over the policy tokens → 0.5, 0, −0.5, 0', () => {
    expect(Array.from(tokenCovariance(adv, logp, mask), (x) => x + 0)).toEqual([0.5, 0, -0.5, 0, 0]);
  });

  it('KL-Cov takes the k = max(⌊ratio·N⌋, 1) largest; the uncentred A·log π would take token 2', () => {
    const kl = { ...COVARIANCE_DEFAULTS, mode: 'kl-cov' as const };
    expect(Array.from(covarianceSelection(adv, logp, mask, kl, new Rng(1)))).toEqual([1, 0, 0, 0, 0]);
    // ratio 0.5 of 4 tokens: the two largest, 0.5 then the earlier of the 0s.
    expect(Array.from(covarianceSelection(adv, logp, mask, { ...kl, klRatio: 0.5 }, new Rng(1)))).toEqual([1, 1, 0, 0, 0]);
  });

  it('Clip-Cov draws k tokens uniformly among lb < cov < ub, none outside', () => {
    const clip = { ...COVARIANCE_DEFAULTS, mode: 'clip-cov' as const, lb: -0.1, ub: 0.6 };
    // Candidates 0, 1, 3 (cov 0.5, 0, 0); k = 2 of them (ratio 0.5 of 4 tokens).
    const rng = new Rng(3);
    const counts = [0, 0, 0, 0, 0];
    const draws = 3000;
    for (let d = 0; d < draws; d++) {
      const s = covarianceSelection(adv, logp, mask, { ...clip, clipRatio: 0.5 }, rng);
      expect(s.reduce((a, b) => a + b, 0)).toBe(2);
      s.forEach((x, i) => (counts[i] += x));
    }
    expect(counts[2]).toBe(0);
    expect(counts[4]).toBe(0);
    // Each candidate is chosen with probability 2/3: within 4 standard errors (±0.034).
    for (const i of [0, 1, 3]) expect(Math.abs(counts[i] / draws - 2 / 3)).toBeLessThan(0.035);
    // No candidate: nothing selected.
    expect(Array.from(covarianceSelection(adv, logp, mask, { ...clip, lb: 5, ub: 6 }, rng))).toEqual([0, 0, 0, 0, 0]);
  });

  it('the update feeds cov_mask on each minibatch, over the positions with a loss weight', async () => {
    const lengths = [3, 2, 4];
    const S = 9;
    const mu = Float32Array.from({ length: S }, (_, i) => -0.2 - 0.3 * i);
    const batch = packedRowsBatch(lengths, { D: 1, obs: new Float32Array(S), actions: new Int32Array(S) }, mu, 4);
    const algo = { ...defaultsFor('grpo'), covariance: { ...COVARIANCE_DEFAULTS, mode: 'kl-cov' as const, klRatio: 0.25 } };
    const advantages = Float64Array.from({ length: S }, (_, i) => (i < 3 ? 1 : i < 5 ? -1 : 0.5));
    const feeds: Record<string, Feed>[] = [];
    const recorder: Learner = {
      batch: 16, hyper: {},
      async step(f) {
        feeds.push({ ...f });
        return { metrics: {}, applied: true, logprobs: new Float32Array(16) };
      },
      async getWeights() { return {}; },
      setWeights() {},
      async release() {},
    };
    await runUpdate(recorder, algo, batch, { oldLogp: mu, advantages, weights: aggregationWeightsOf(batch, algo), refLogp: null }, new Rng(2), { logprobs: mu, mask: new Float32Array(S) });
    expect(feeds.length).toBe(1);
    const f = feeds[0];
    const sel = f.cov_mask as Float32Array;
    // ⌊0.25·9⌋ = 2 tokens, those of largest covariance among the fed rows (recomputed from the feed).
    const cov = tokenCovariance(f.advantages as Float32Array, f.old_logprobs as Float32Array, f.mask as Float32Array);
    const picked = Array.from(sel.keys()).filter((i) => sel[i] === 1);
    expect(picked.length).toBe(2);
    const others = Array.from(sel.keys()).filter((i) => sel[i] === 0 && (f.mask as Float32Array)[i] === 1);
    for (const p of picked) for (const o of others) expect(cov[p]).toBeGreaterThanOrEqual(cov[o]);
  });
});
