/**
 * GMPO as its paper writes it (Zhao et al. 2025, arXiv 2507.20673, J_GMPO; veRL `geo_mean`):
 *   J(θ) = (1/G) Σ_i Â_i · exp((1/|o_i|) Σ_t sgn(Â_i)·min(sgn(Â_i)·log r_i,t, sgn(Â_i)·clip(log r_i,t, −ε_low, ε_high))),
 * the geometric mean of each episode's token ratios, each clipped in log space and only in Â's
 * direction, computed here in float64 from the policy graph's log-probs and differentiated by
 * central finite differences, against the train graph on grid rows (episodes by `seq_ids`,
 * 'sequence' weights 1/(G·|o_i|)). The wrong variant it rules out: the clip applied to the
 * geometric mean as a whole (GSPO's sequence clip on the same ratio), which differs where single
 * tokens leave the range while their episode's mean stays inside.
 */
import { describe, expect, it } from 'vitest';
import type { Weights } from '../../core/models/types.ts';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { fdCheck, ort, paperScene } from './test/paperFd.ts';
import { rawTrainRunner } from './test/util.ts';

describe('GMPO: the paper objective', () => {
  it('loss and gradient are those of (1/G) Σ_i Â_i·exp(mean_t of the sign-clipped log-ratios)', { timeout: 60_000 }, async () => {
    const lengths = [4, 5, 3, 4];
    const { m, w, S, G, episode, rng, policy, lp0, feedOf } = await paperScene(lengths, 7, 8);
    const eps = { low: 0.4, high: 0.4 };
    // Tokens alternate far outside the log range (±0.6) so each episode's mean log-ratio stays inside it.
    const oldLogp = Float32Array.from(lp0, (x, r) => x + (r % 2 ? 0.6 : -0.6) + 0.05 * rng.normal());
    const epAdv = [1.1, -0.8, 0.7, -1.3];
    const feed = feedOf(epAdv, oldLogp, true);
    const clampLog = (x: number) => Math.min(Math.max(x, -eps.low), eps.high);
    /** The paper's objective (token clip), or the wrong variant (clip on the sequence's mean). */
    const negJ = (variant: 'paper' | 'sequence-clip') => async (wt: Weights) => {
      const lp = await policy.at(wt);
      let J = 0;
      for (let i = 0; i < G; i++) {
        const A = epAdv[i];
        const sgn = Math.sign(A);
        let sum = 0;
        for (let r = 0; r < S; r++) {
          if (episode[r] !== i) continue;
          const l = lp[r] - oldLogp[r];
          sum += variant === 'paper' ? sgn * Math.min(sgn * l, sgn * clampLog(l)) : l;
        }
        const meanLog = sum / lengths[i];
        J += variant === 'paper' ? A * Math.exp(meanLog) : Math.min(A * Math.exp(meanLog), A * Math.exp(clampLog(meanLog)));
      }
      return -J / G;
    };
    const spec = buildTrainStep(m, { batch: S, loss: { kind: 'policy-gradient', objective: 'gmpo', clipLow: eps.low, clipHigh: eps.high, entropyCoef: 0 }, exposeGradients: true });
    const got = await (await rawTrainRunner(ort, spec))({ weights: w }, feed);
    expect(got.pg_loss[0]).toBeCloseTo(await negJ('paper')(w), 5);
    const { worst, scale } = await fdCheck(m, w, got, negJ('paper'), 24, 9);
    expect(worst).toBeLessThan(5e-3);
    expect(scale).toBeGreaterThan(1e-3);
    // Half the tokens' ratios were clipped in Â's direction (cut from the gradient), every episode keeps some.
    expect(got.clipfrac_low[0] + got.clipfrac_high[0]).toBeGreaterThan(0.2);
    // The sequence-level clip keeps every token in the gradient here: a different objective.
    expect(Math.abs(got.pg_loss[0] - (await negJ('sequence-clip')(w)))).toBeGreaterThan(1e-2);
    expect((await fdCheck(m, w, got, negJ('sequence-clip'), 24, 9)).worst).toBeGreaterThan(2e-2);
    await policy.release();
  });
});
