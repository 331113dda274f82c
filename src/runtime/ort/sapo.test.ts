/**
 * SAPO as its paper writes it (Gao et al. 2025, arXiv 2511.20347, eq. for J_SAPO):
 *   J(θ) = (1/G) Σ_i (1/|y_i|) Σ_t f_i,t(r_i,t(θ))·Â_i,  f(r) = (4/τ)·σ(τ(r − 1)),
 *   τ = τ_pos where Â > 0, τ_neg where Â < 0,
 * computed here in float64 from the policy graph's log-probs and differentiated by central finite
 * differences, against the train graph's loss and gradient. The wrong variant it rules out: one
 * temperature for every token (τ_pos also for Â < 0), whose loss and gradient differ here.
 */
import { describe, expect, it } from 'vitest';
import type { Weights } from '../../core/models/types.ts';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { fdCheck, ort, paperScene } from './test/paperFd.ts';
import { rawTrainRunner } from './test/util.ts';

describe('SAPO: the paper objective', () => {
  it('loss and gradient are those of (1/G) Σ_i (1/|y_i|) Σ_t (4/τ)σ(τ(r − 1))·Â_i, τ by the sign of Â', { timeout: 60_000 }, async () => {
    const lengths = [3, 5, 2, 6];
    const { m, w, S, G, episode, rng, policy, lp0, feedOf } = await paperScene(lengths, 3, 4);
    // Ratios spread far from 1 on both sides, where the gate has faded and the temperatures matter.
    const shifts = [-0.6, -0.1, 0.1, 0.6];
    const oldLogp = Float32Array.from(lp0, (x, r) => x + shifts[r % 4] + 0.05 * rng.normal());
    const epAdv = [1.2, -0.9, 0.6, -1.4];
    const tau = { pos: 1, neg: 3 };
    const feed = feedOf(epAdv, oldLogp);
    const sigma = (x: number) => 1 / (1 + Math.exp(-x));
    const negJ = (tauNeg: number) => async (wt: Weights) => {
      const lp = await policy.at(wt);
      let J = 0;
      for (let r = 0; r < S; r++) {
        const i = episode[r];
        const t = epAdv[i] > 0 ? tau.pos : tauNeg;
        const ratio = Math.exp(lp[r] - oldLogp[r]);
        J += ((4 / t) * sigma(t * (ratio - 1)) * epAdv[i]) / (G * lengths[i]);
      }
      return -J;
    };
    const spec = buildTrainStep(m, { batch: S, loss: { kind: 'policy-gradient', objective: 'sapo', tauPos: tau.pos, tauNeg: tau.neg, entropyCoef: 0 }, exposeGradients: true });
    const got = await (await rawTrainRunner(ort, spec))({ weights: w }, feed);
    expect(got.pg_loss[0]).toBeCloseTo(await negJ(tau.neg)(w), 5);
    const { worst, scale } = await fdCheck(m, w, got, negJ(tau.neg), 24, 5);
    expect(worst).toBeLessThan(5e-3);
    expect(scale).toBeGreaterThan(1e-3);
    // One temperature for all (τ_pos where Â < 0 too): a different loss, and a gradient the graph's is not.
    expect(Math.abs(got.pg_loss[0] - (await negJ(tau.pos)(w)))).toBeGreaterThan(1e-2);
    expect((await fdCheck(m, w, got, negJ(tau.pos), 24, 5)).worst).toBeGreaterThan(2e-2);
    // At ratio 1 the gate's slope is 1: SAPO's gradient equals the plain policy gradient's there.
    const atOne = await rawTrainRunner(ort, buildTrainStep(m, { batch: S, loss: { kind: 'policy-gradient', objective: 'sapo', tauPos: 2, tauNeg: 5, entropyCoef: 0 }, exposeGradients: true }));
    const clip = await rawTrainRunner(ort, buildTrainStep(m, { batch: S, loss: { kind: 'policy-gradient', objective: 'clip', entropyCoef: 0 }, exposeGradients: true }));
    const onPolicy = { ...feed, old_logprobs: Float32Array.from(lp0) };
    const a = await atOne({ weights: w }, onPolicy);
    const c = await clip({ weights: w }, onPolicy);
    for (const p of m.params) for (let k = 0; k < a[`grad.${p.name}`].length; k++) expect(a[`grad.${p.name}`][k]).toBeCloseTo(c[`grad.${p.name}`][k], 5);
    await policy.release();
  });
});
