/**
 * The lens's per-token weights against each loss written out as its paper states it and
 * differentiated by central finite differences in a token's log π (w_t = −(∂ℓ/∂log π_t)/A_t per
 * unit of aggregation weight). The wrong variant this rules out for SAPO: the gate's value f(r)
 * read as the weight instead of its slope f′(r)·r (they agree only at r = 1); for GMPO, the
 * token's own ratio instead of the sequence's geometric mean.
 */
import { describe, expect, it } from 'vitest';
import { lensWeights, type LensLoss } from './lossLens.ts';

const BASE: LensLoss = { objective: 'clip', clipLow: 0.2, clipHigh: 0.28, tauPos: 1, tauNeg: 3, covariance: 'off' };
// Two sequences of four tokens, ratios on both sides of the clip range.
const logRatio = [-0.5, -0.1, 0.05, 0.4, 0.3, -0.3, 0.1, -0.05];
const adv = [1, 1, 1, 1, -0.7, -0.7, -0.7, -0.7];
const seq = [0, 0, 0, 0, 1, 1, 1, 1];
const clip = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);
const sigma = (x: number) => 1 / (1 + Math.exp(-x));

/** −(1/|o|) Σ_t … as each paper writes the loss of one sequence, at log-ratios `l` (the whole batch). */
function sequenceLoss(loss: LensLoss, l: number[], s: number): number {
  const idx = l.map((_, i) => i).filter((i) => seq[i] === s);
  const A = adv[idx[0]];
  const mean = (f: (i: number) => number) => idx.reduce((a, i) => a + f(i), 0) / idx.length;
  switch (loss.objective) {
    case 'clip': return -mean((i) => Math.min(Math.exp(l[i]) * A, clip(Math.exp(l[i]), 1 - loss.clipLow, 1 + loss.clipHigh) * A));
    // CISPO's weight is detached: a constant at the point of evaluation (logRatio), times A·log π.
    case 'cispo': return -mean((i) => clip(Math.exp(logRatio[i]), 1 - loss.clipLow, 1 + loss.clipHigh) * A * l[i]);
    case 'sapo': return -mean((i) => { const tau = A > 0 ? loss.tauPos : loss.tauNeg; return (4 / tau) * sigma(tau * (Math.exp(l[i]) - 1)) * A; });
    case 'gspo': { const r = Math.exp(mean((i) => l[i])); return -Math.min(r * A, clip(r, 1 - loss.clipLow, 1 + loss.clipHigh) * A); }
    case 'gmpo': { const sg = Math.sign(A); return -A * Math.exp(mean((i) => sg * Math.min(sg * l[i], sg * clip(l[i], -loss.clipLow, loss.clipHigh)))); }
  }
}

/** w_t by central differences: −∂(loss of its sequence)/∂l_t · |o| / A (the token's share 1/|o|). */
function fdWeights(loss: LensLoss): number[] {
  const h = 1e-6;
  return logRatio.map((_, t) => {
    const at = (d: number) => sequenceLoss(loss, logRatio.map((x, i) => (i === t ? x + d : x)), seq[t]);
    const n = seq.filter((s) => s === seq[t]).length;
    return (-(at(h) - at(-h)) / (2 * h)) * n / adv[t];
  });
}

describe('loss lens', () => {
  it.each(['clip', 'cispo', 'sapo', 'gspo', 'gmpo'] as const)('%s: each token\'s weight is the loss\'s own derivative', (objective) => {
    const loss = { ...BASE, objective, ...(objective === 'gmpo' ? { clipLow: 0.2, clipHigh: 0.2 } : objective === 'gspo' ? { clipLow: 0.02, clipHigh: 0.03 } : {}) };
    const { weight } = lensWeights(loss, { logRatio, adv, seq });
    const want = fdWeights(loss);
    weight.forEach((w, i) => expect(w, `token ${i}`).toBeCloseTo(want[i], 5));
  });

  it('states: the clip cuts in A\'s direction, SAPO fades far from 1, Clip-Cov masks its selection', () => {
    const cut = lensWeights(BASE, { logRatio, adv, seq }).state;
    // A > 0 above 1.28 (token 3: e^0.4 = 1.49); A < 0 below 0.8 (token 5: e^−0.3 = 0.74).
    expect(cut).toEqual(['full', 'full', 'full', 'cut', 'full', 'cut', 'full', 'full']);
    const sapo = lensWeights({ ...BASE, objective: 'sapo' }, { logRatio, adv, seq });
    expect(sapo.state.filter((s) => s === 'faded').length).toBeGreaterThan(0);
    // The gate's value f(r) is not its weight: they differ away from r = 1.
    const f = (i: number) => { const tau = adv[i] > 0 ? BASE.tauPos : BASE.tauNeg; return (4 / tau) * sigma(tau * (Math.exp(logRatio[i]) - 1)); };
    expect(Math.abs(sapo.weight[0] - f(0))).toBeGreaterThan(0.05);
    const masked = lensWeights({ ...BASE, covariance: 'clip-cov' }, { logRatio, adv, seq, covMask: [0, 1, 0, 0, 0, 0, 0, 0] });
    expect([masked.weight[1], masked.state[1]]).toEqual([0, 'masked']);
  });
});
