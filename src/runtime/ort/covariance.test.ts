/**
 * Clip-Cov and KL-Cov on top of PPO's clipped surrogate, as veRL's `clip_cov` / `kl_cov` losses
 * write them (Cui et al. 2025), given the selected tokens (`cov_mask`): per token
 *   Clip-Cov: ℓ = −min(r·A, clip(r)·A)·(1 − sel)          (the selected tokens carry nothing)
 *   KL-Cov:   ℓ = −min(r·A, clip(r)·A) + sel·c·|log r|
 * summed with the aggregation weights, in float64 from the policy graph's log-probs and
 * differentiated by central finite differences, against the train graph. Wrong variants ruled
 * out: Clip-Cov that leaves the selection out (plain PPO), and KL-Cov's penalty on the signed log r
 * (k1) instead of |log r|.
 */
import { describe, expect, it } from 'vitest';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { fdCheck, logprobsOf, mlp, ort, randomEpisodes } from './test/paperFd.ts';
import { rawTrainRunner } from './test/util.ts';

const CLIP = { low: 0.2, high: 0.28 };

async function setup(seed: number) {
  const m = mlp();
  const w = initWeights(m, seed);
  const { S, obs, actions, rng } = randomEpisodes([16], seed + 1);
  const policy = await logprobsOf(m, obs, actions);
  const lp0 = await policy.at(w);
  // Ratios on both sides of 1, some outside the clip range; a quarter of the tokens selected.
  const shifts = [-0.4, -0.1, 0.1, 0.4];
  const oldLogp = Float32Array.from(lp0, (x, r) => x + shifts[r % 4] + 0.03 * rng.normal());
  const adv = Float32Array.from({ length: S }, () => rng.normal());
  const sel = Float32Array.from({ length: S }, (_, r) => (r % 4 === 1 || r % 4 === 2 ? (r < 8 ? 1 : 0) : r === 12 ? 1 : 0));
  const feed = { obs, actions, advantages: adv, old_logprobs: oldLogp, weights: new Float32Array(S).fill(1 / S), mask: new Float32Array(S).fill(1), cov_mask: sel };
  /** −Σ w·ℓ with ℓ as the variant says. */
  const negJ = (variant: 'clip-cov' | 'no-selection' | 'kl-cov' | 'kl-signed', coef = 0) => async (wt: Weights) => {
    const lp = await policy.at(wt);
    let L = 0;
    for (let r = 0; r < S; r++) {
      const l = lp[r] - oldLogp[r];
      const ratio = Math.exp(l);
      const pg = -Math.min(ratio * adv[r], Math.min(Math.max(ratio, 1 - CLIP.low), 1 + CLIP.high) * adv[r]);
      const term = variant === 'clip-cov' ? pg * (1 - sel[r]) : variant === 'no-selection' ? pg : pg + sel[r] * coef * (variant === 'kl-cov' ? Math.abs(l) : l);
      L += term / S;
    }
    return L;
  };
  return { m, w, S, feed, negJ, policy };
}

describe('covariance-based entropy control on the clipped surrogate', () => {
  it('Clip-Cov: the selected tokens carry no loss and no gradient', { timeout: 60_000 }, async () => {
    const { m, w, feed, negJ, policy } = await setup(21);
    const spec = buildTrainStep(m, { batch: feed.mask.length, loss: { kind: 'policy-gradient', clipLow: CLIP.low, clipHigh: CLIP.high, entropyCoef: 0, covariance: 'clip-cov' }, exposeGradients: true });
    const got = await (await rawTrainRunner(ort, spec))({ weights: w }, feed);
    expect(got.pg_loss[0]).toBeCloseTo(await negJ('clip-cov')(w), 5);
    const { worst, scale } = await fdCheck(m, w, got, negJ('clip-cov'), 24, 22);
    expect(worst).toBeLessThan(5e-3);
    expect(scale).toBeGreaterThan(1e-3);
    expect((await fdCheck(m, w, got, negJ('no-selection'), 24, 22)).worst).toBeGreaterThan(2e-2);
    await policy.release();
  });

  it('KL-Cov: + c·|log r| on the selected tokens', { timeout: 60_000 }, async () => {
    const { m, w, feed, negJ, policy } = await setup(31);
    const coef = 0.7;
    const spec = buildTrainStep(m, { batch: feed.mask.length, loss: { kind: 'policy-gradient', clipLow: CLIP.low, clipHigh: CLIP.high, entropyCoef: 0, covariance: 'kl-cov', covKlCoef: coef }, exposeGradients: true });
    const got = await (await rawTrainRunner(ort, spec))({ weights: w }, feed);
    expect(got.pg_loss[0]).toBeCloseTo(await negJ('kl-cov', coef)(w), 5);
    const { worst, scale } = await fdCheck(m, w, got, negJ('kl-cov', coef), 24, 32);
    expect(worst).toBeLessThan(5e-3);
    expect(scale).toBeGreaterThan(1e-3);
    expect((await fdCheck(m, w, got, negJ('kl-signed', coef), 24, 32)).worst).toBeGreaterThan(2e-2);
    await policy.release();
  });
});
