import { describe, expect, it } from 'vitest';
import { klK1, klK3, klPenalizedRewards, klPerToken, policyLoss, policyLossGradLogp, totalLoss, valueLoss, type PolicyLossConfig, type PolicyLossInputs } from './losses.ts';

const L = Math.log;
const cfg: PolicyLossConfig = { clipLow: 0.2, clipHigh: 0.28, klCoef: 0, klEstimator: 'k3', klMode: 'loss', entropyCoef: 0 };

describe('KL estimators', () => {
  it('k1 and k3 for π = 0.5, π_ref = 0.25', () => {
    // k1 = ln 0.5 − ln 0.25 = ln 2 = 0.6931472.
    // k3: ρ = 0.25/0.5 = 0.5; ρ − 1 − ln ρ = 0.5 − 1 + ln 2 = 0.1931472.
    expect(klK1(L(0.5), L(0.25))).toBeCloseTo(0.6931472, 7);
    expect(klK3(L(0.5), L(0.25))).toBeCloseTo(0.1931472, 7);
    // Equal policies: both 0. k1 can be negative (π < π_ref), k3 never is.
    expect(klK3(L(0.3), L(0.3))).toBe(0);
    expect(klK1(L(0.25), L(0.5))).toBeCloseTo(-0.6931472, 7);
    // π = 0.25, π_ref = 0.5: ρ = 2, k3 = 2 − 1 − ln 2 = 0.3068528.
    expect(klK3(L(0.25), L(0.5))).toBeCloseTo(0.3068528, 7);
  });

  it('KL as a reward penalty sums per-token KL over each sequence\'s policy tokens', () => {
    // B = 2, T = 2. Seq 0 tokens: (0.5 vs 0.25), (0.5 vs 0.5). Seq 1: (0.5 vs 0.25), masked.
    const logp = [L(0.5), L(0.5), L(0.5), L(0.9)];
    const ref = [L(0.25), L(0.5), L(0.25), L(0.1)];
    const mask = [1, 1, 1, 0];
    // k1 sums: seq 0 = ln2 + 0, seq 1 = ln2 (masked token ignored). β = 0.1:
    // rewards [1, 0] -> [1 − 0.0693147, −0.0693147].
    const r = klPenalizedRewards([1, 0], 2, logp, ref, mask, 0.1, 'k1');
    expect(r.seqKl[0]).toBeCloseTo(0.6931472, 7);
    expect(r.seqKl[1]).toBeCloseTo(0.6931472, 7);
    expect(r.rewards[0]).toBeCloseTo(0.9306853, 7);
    expect(r.rewards[1]).toBeCloseTo(-0.0693147, 7);
    const k3 = klPerToken(logp, ref, mask, 'k3');
    expect(Array.from(k3).map((x) => +x.toFixed(7))).toEqual([0.1931472, 0, 0.1931472, 0]);
  });
});

describe('clipped surrogate (clip-higher ε_low = 0.2, ε_high = 0.28)', () => {
  // Hand-made set; oldLogp = 0, logp = ln ρ. Bounds: 0.8 and 1.28.
  //  i  ρ     A   mask  clipped?        ℓ = −min(ρA, clip(ρ)A)
  //  0  0.7  −1   1     low             −min(−0.7, −0.8) = 0.8
  //  1  0.7  +1   1     no              −min(0.7, 0.8)   = −0.7
  //  2  1.3  +1   1     high            −min(1.3, 1.28)  = −1.28
  //  3  1.25 +1   1     no (< 1.28)     −1.25
  //  4  1.3  −1   1     no (A < 0 high) −min(−1.3, −1.28) = 1.3
  //  5  5.0   0   0     env token       (ignored)
  //  6  1.0  +2   1     no              −2
  // Policy tokens 6 -> clipfrac_low = clipfrac_high = 1/6.
  // Token weights 1/6: pg_loss = (0.8 − 0.7 − 1.28 − 1.25 + 1.3 − 2)/6 = −3.13/6 = −0.5216667.
  // approx_kl = mean k3(ρ) = mean((ρ−1) − ln ρ) over the 6 policy tokens:
  //   0.0566749 ×2, 0.0376357 ×2, 0.0268564, 0 -> 0.2154779/6 = 0.0359130.
  const ratios = [0.7, 0.7, 1.3, 1.25, 1.3, 5.0, 1.0];
  const A = [-1, 1, 1, 1, -1, 0, 2];
  const mask = [1, 1, 1, 1, 1, 0, 1];
  const w = mask.map((m) => m / 6);
  const base = { logp: ratios.map(L), oldLogp: ratios.map(() => 0), advantages: A, weights: w, mask };

  it('loss value, clip fractions low/high and approx_kl', () => {
    const r = policyLoss(base, cfg);
    expect(r.pgLoss).toBeCloseTo(-0.5216667, 7);
    expect(r.clipfracLow).toBeCloseTo(1 / 6, 12);
    expect(r.clipfracHigh).toBeCloseTo(1 / 6, 12);
    expect(r.approxKl).toBeCloseTo(0.035913, 6);
    expect(r.loss).toBeCloseTo(r.pgLoss, 12);
    expect(Number.isNaN(r.klRef)).toBe(true);
  });

  it('symmetric clip 0.2/0.2 clips token 3 (1.25 > 1.2) too', () => {
    // Tokens 2 and 3 both become −1.2 (were −1.28, −1.25); token 4 (A < 0) stays 1.3:
    // pg = (0.8 − 0.7 − 1.2 − 1.2 + 1.3 − 2)/6 = −3/6 = −0.5; high = 2/6.
    const r = policyLoss(base, { ...cfg, clipHigh: 0.2 });
    expect(r.pgLoss).toBeCloseTo(-0.5, 12);
    expect(r.clipfracHigh).toBeCloseTo(2 / 6, 12);
  });

  it('importance weights scale each token\'s loss', () => {
    // Only token 6 (ℓ = −2) reweighted by 0.5: pg = (−3.13 + 1)/6 = −0.355.
    const is = [1, 1, 1, 1, 1, 1, 0.5];
    expect(policyLoss({ ...base, isWeights: is }, cfg).pgLoss).toBeCloseTo(-0.355, 10);
  });

  it('KL term as loss (k3) and entropy bonus; klMode "reward" drops the KL term', () => {
    // Two policy tokens with weights 0.5: logp ln 0.5, ref ln 0.25 (k3 0.1931472) and equal (0).
    // A = 0, ρ = 1 -> pg = 0. klLoss = 0.5·0.1931472 = 0.0965736.
    // Entropies [1, 2] (+ masked 9): bonus = 0.5·1 + 0.5·2 = 1.5; actor/entropy = 1.5.
    // loss = 0 + 0.1·0.0965736 − 0.01·1.5 = −0.00534264.
    const inp = {
      logp: [L(0.5), L(0.5), 0],
      oldLogp: [L(0.5), L(0.5), 0],
      advantages: [0, 0, 0],
      weights: [0.5, 0.5, 0],
      mask: [1, 1, 0],
      refLogp: [L(0.25), L(0.5), -5],
      entropy: [1, 2, 9],
    };
    const c = { ...cfg, klCoef: 0.1, entropyCoef: 0.01 };
    const r = policyLoss(inp, c);
    expect(r.klLoss).toBeCloseTo(0.0965736, 7);
    expect(r.klRef).toBeCloseTo(0.0965736, 7); // mean of k3 over 2 tokens, same numbers here
    expect(r.entropy).toBe(1.5);
    expect(r.entropyBonus).toBe(1.5);
    expect(r.loss).toBeCloseTo(-0.00534264, 8);
    expect(policyLoss(inp, { ...c, klMode: 'reward' }).loss).toBeCloseTo(-0.015, 12);
    // k1 as the loss estimator: klLoss = 0.5·ln 2 = 0.3465736.
    expect(policyLoss(inp, { ...c, klEstimator: 'k1' }).klLoss).toBeCloseTo(0.3465736, 7);
  });

  it('KL loss without reference log-probs is an error', () => {
    expect(() => policyLoss(base, { ...cfg, klCoef: 0.1 })).toThrow(/refLogp/);
  });
});

describe('value loss', () => {
  // values [0.5, 2.0, 1.1], old [1, 1, 0.5], returns 1, weights 1/3, clip 0.2.
  //  0: (0.5−1)² = 0.25; V_clip = 1 + clip(−0.5) = 0.8 -> 0.04; max 0.25 -> ½ = 0.125
  //  1: (2−1)² = 1;      V_clip = 1.2 -> 0.04;                max 1    -> ½ = 0.5
  //  2: (1.1−1)² = 0.01; V_clip = 0.5 + 0.2 = 0.7 -> 0.09;     max 0.09 -> ½ = 0.045
  // clipped: (0.125 + 0.5 + 0.045)/3 = 0.2233333; unclipped: (0.125 + 0.5 + 0.005)/3 = 0.21.
  const inp = { values: [0.5, 2.0, 1.1], oldValues: [1, 1, 0.5], returns: [1, 1, 1], weights: [1 / 3, 1 / 3, 1 / 3] };

  it('clipped and unclipped', () => {
    expect(valueLoss(inp, 0.2)).toBeCloseTo(0.2233333, 7);
    expect(valueLoss(inp, null)).toBeCloseTo(0.21, 12);
  });

  it('total = actor loss + valueCoef · value loss', () => {
    const actor = policyLoss({ logp: [0], oldLogp: [0], advantages: [1], weights: [1], mask: [1] }, cfg);
    // actor loss = −1; total = −1 + 0.5·0.21 = −0.895.
    expect(totalLoss(actor, valueLoss(inp, null), 0.5)).toBeCloseTo(-0.895, 12);
  });
});

describe('∂loss/∂logp reference', () => {
  // Same hand-made set as above (ε 0.2 / 0.28, weights 1/6).
  const ratios = [0.7, 0.7, 1.3, 1.25, 1.3, 5.0, 1.0];
  const mask = [1, 1, 1, 1, 1, 0, 1];
  const inp: PolicyLossInputs = {
    logp: ratios.map(L),
    oldLogp: ratios.map(() => 0),
    advantages: [-1, 1, 1, 1, -1, 0, 2],
    weights: mask.map((m) => m / 6),
    mask,
    refLogp: ratios.map(() => L(0.5)),
  };

  it('by hand: clipped tokens get 0, unclipped −w·A·ρ', () => {
    // 0: low-clipped -> 0. 1: −(1/6)·1·0.7. 2: high-clipped -> 0. 3: −1.25/6. 4: −(1/6)·(−1)·1.3 = +1.3/6.
    // 5: masked -> 0. 6: −2·1/6.
    const g = policyLossGradLogp(inp, cfg);
    const want = [0, -0.7 / 6, 0, -1.25 / 6, 1.3 / 6, 0, -2 / 6];
    want.forEach((v, i) => expect(g[i], `token ${i}`).toBeCloseTo(v, 12));
  });

  it('matches central finite differences of policyLoss, with k1 and k3 KL terms', () => {
    for (const klEstimator of ['k1', 'k3'] as const) {
      const c = { ...cfg, klCoef: 0.3, klEstimator };
      const g = policyLossGradLogp(inp, c);
      const h = 1e-6;
      for (let i = 0; i < ratios.length; i++) {
        const plus = Array.from(inp.logp); plus[i] += h;
        const minus = Array.from(inp.logp); minus[i] -= h;
        const fd = (policyLoss({ ...inp, logp: plus }, c).loss - policyLoss({ ...inp, logp: minus }, c).loss) / (2 * h);
        expect(g[i], `${klEstimator} token ${i}`).toBeCloseTo(fd, 7);
      }
    }
  });
});
