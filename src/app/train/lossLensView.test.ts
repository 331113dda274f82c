import { describe, expect, it } from 'vitest';
import { lensSample } from '../../core/update/lensSample.ts';
import { countsText, lensLossOf, readLens } from './lossLensView.ts';

// Two episodes of 3 positions; position 2 is off the mask (an env token), position 5 has no loss weight.
const batch = { n: 2, starts: Int32Array.from([0, 3]), lengths: Int32Array.from([3, 3]), mask: Float32Array.from([1, 1, 0, 1, 1, 1]) };
const weights = [1, 1, 1, 1, 1, 0];
// Ratios 1, 2, –, 0.5, 2 at the trained positions, as log π_new − log π_old.
const oldLogp = [-1, -2, -9, -0.5, -1.5, -1];
const ratio = [1, 2, 7, 0.5, 2, 3];
const stepLogp = oldLogp.map((l, i) => l + Math.log(ratio[i]));
const adv = [1, 1, 5, -1, -1, 4];

describe('loss lens payload and reading', () => {
  it('samples the trained positions, with log r = new − old, their advantage and sequence', () => {
    const s = lensSample(batch, oldLogp, adv, stepLogp, weights);
    expect(s.total).toBe(4);
    expect(Array.from(s.logRatio, Math.exp).map((x) => +x.toFixed(5))).toEqual([1, 2, 0.5, 2]);
    expect(Array.from(s.adv)).toEqual([1, 1, -1, -1]);
    expect(Array.from(s.seq)).toEqual([0, 0, 1, 1]);
    // Thinned to 2: an even stride in position order (positions 0 and 3).
    const t = lensSample(batch, oldLogp, adv, stepLogp, weights, 2);
    expect(Array.from(t.adv)).toEqual([1, -1]);
    expect(t.total).toBe(4);
  });

  it('reads the same tokens under clip and under SAPO as worked by hand', () => {
    const s = lensSample(batch, oldLogp, adv, stepLogp, weights);
    const algo = { algo: 'grpo', clipLow: 0.2, clipHigh: 0.2, sapo: { tauPos: 1, tauNeg: 1.05 } };
    // Clip, ε = 0.2: r = 2 with A > 0 is above 1.2 → cut; r = 0.5 with A < 0 is below 0.8 → cut;
    // r = 2 with A < 0 is on the side the clip lets through → full, weight r.
    const clip = readLens(lensLossOf(algo), s);
    expect(clip.state).toEqual(['full', 'cut', 'cut', 'full']);
    expect(Array.from(clip.weight).map((w) => +w.toFixed(5))).toEqual([1, 0, 0, 2]);
    // SAPO: w = r·sech²(τ(r − 1)/2) (= 4σ(1 − σ)·r), τ = 1 for A > 0, 1.05 for A < 0; faded below 0.9·r.
    const sech2 = (x: number) => 1 / Math.cosh(x) ** 2;
    const want = [1, 2 * sech2(0.5), 0.5 * sech2((1.05 * -0.5) / 2), 2 * sech2(1.05 / 2)];
    const sapo = readLens(lensLossOf(algo, 'sapo'), s);
    sapo.weight.forEach((w, i) => expect(w).toBeCloseTo(want[i], 5));
    // sech²(0.5) = 0.786 and sech²(0.525) = 0.768 fade; sech²(0.2625) = 0.934 does not.
    expect(sapo.state).toEqual(['full', 'faded', 'full', 'faded']);
    expect(countsText('PPO clip', clip)).toBe('PPO clip: 2 full, 2 cut of 4 tokens.');
    expect(countsText('SAPO', sapo)).toBe('SAPO: 2 full, 2 faded of 4 tokens.');
  });
});
